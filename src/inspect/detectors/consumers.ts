import { ts } from 'ts-morph';
import { accessChain, decoratorCall, decoratorsOf, isFunctionLike, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import type { ConsumerFinding } from '../types.js';
import { dedupesMessages } from './dedupeEvidence.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

const BULLMQ = /^(bullmq|@taskforcesh\/bullmq-pro)$/;
const NATS = /^(nats|@nats-io\/.+)$/;
const AMQP = /^(amqplib|amqplib\/callback_api|amqp-connection-manager)$/;

/** Message and job consumers: each redelivery re-runs the handler, so each is a place that needs dedupe. */
export const consumers: Detector = {
  name: 'consumers',
  mentions: /bullmq|['"]bull['"]|kafkajs|eachMessage|eachBatch|amqp|\.consume\(|SQSEvent|SQSHandler|sqs-consumer|ReceiveMessageCommand|nats|@Processor|@Process\(|EventPattern|MessagePattern|RabbitSubscribe|SqsMessageHandler|pg-boss|\.work\(|agenda/,
  detect(ctx, facts) {
    const modules = new Set([...ctx.index.imports.values()].map((b) => b.module));
    const has = (re: RegExp) => [...modules].some((m) => re.test(m));
    for (const expr of ctx.index.news) {
      const origin = ctx.originOf(expr.expression);
      const args = expr.arguments ?? [];
      if (origin && BULLMQ.test(origin.module) && origin.imported === 'Worker') {
        push(ctx, facts, expr, 'bullmq', stringValue(args[0], ctx.index.consts), args[1]);
      } else if (origin?.module === '@aws-sdk/client-sqs' && origin.imported === 'ReceiveMessageCommand') {
        push(ctx, facts, expr, 'sqs', queueName(stringValue(objectProperty(args[0], 'QueueUrl'), ctx.index.consts)), undefined, enclosingText(expr, ctx));
      }
    }
    const topics = kafkaTopics(ctx);
    for (const call of ctx.index.calls) {
      if (!ts.isPropertyAccessExpression(call.expression)) continue;
      const method = call.expression.name.text;
      const receiver = accessChain(call.expression.expression);
      const arg0 = call.arguments[0];
      if (method === 'run' && arg0 && (objectProperty(arg0, 'eachMessage') || objectProperty(arg0, 'eachBatch'))) {
        const handler = objectProperty(arg0, 'eachMessage') ?? objectProperty(arg0, 'eachBatch');
        push(ctx, facts, call, 'kafka', topics.get(receiver.join('.')) ?? topics.get('*'), handler);
      } else if (method === 'consume' && has(AMQP) && call.arguments.length >= 2) {
        push(ctx, facts, call, 'rabbitmq', stringValue(arg0, ctx.index.consts), call.arguments[1]);
      } else if (method === 'subscribe' && has(NATS) && arg0 && stringValue(arg0, ctx.index.consts) !== undefined) {
        push(ctx, facts, call, 'nats', stringValue(arg0, ctx.index.consts), objectProperty(call.arguments[1], 'callback'), enclosingText(call, ctx));
      } else if (method === 'create' && ctx.originOf(call.expression.expression)?.module === 'sqs-consumer') {
        const handler = objectProperty(arg0, 'handleMessage') ?? objectProperty(arg0, 'handleMessageBatch');
        push(ctx, facts, call, 'sqs', queueName(stringValue(objectProperty(arg0, 'queueUrl'), ctx.index.consts)), handler);
      } else if (method === 'process' && bullQueue(receiver, ctx)) {
        const name = bullQueue(receiver, ctx);
        push(ctx, facts, call, 'bull', name === true ? undefined : name, call.arguments[call.arguments.length - 1]);
      } else if (method === 'work' && has(/^pg-boss$/) && arg0) {
        push(ctx, facts, call, 'pg-boss', stringValue(arg0, ctx.index.consts), call.arguments[call.arguments.length - 1]);
      } else if (method === 'define' && has(/^(agenda|@hokify\/agenda)$/) && arg0) {
        push(ctx, facts, call, 'agenda', stringValue(arg0, ctx.index.consts), call.arguments[call.arguments.length - 1]);
      }
    }
    recordSqsLambda(ctx, facts);
    recordNestConsumers(ctx, facts);
  },
};

function push(ctx: FileContext, facts: FileFacts, node: ts.Node, broker: string, queue: string | undefined, handler: ts.Expression | undefined, text?: string): void {
  const finding: ConsumerFinding = {
    kind: 'consumer',
    id: `${broker} ${queue ?? '?'}`,
    file: ctx.rel,
    line: ctx.line(node),
    broker,
    ...(queue ? { queue } : {}),
    dedupes: dedupesMessages(text ?? handlerText(handler, ctx)),
  };
  facts.findings.push(finding);
}

/** The handler's source: inline, or a same-file function / method referenced by name. */
function handlerText(handler: ts.Expression | undefined, ctx: FileContext): string {
  if (!handler) return '';
  const node = unwrap(handler);
  if (isFunctionLike(node)) return node.getText(ctx.sf);
  const name = ts.isIdentifier(node) ? node.text : ts.isPropertyAccessExpression(node) ? node.name.text : undefined;
  if (!name) return '';
  const key = name.toLowerCase();
  for (const facts of ctx.index.functions.values()) {
    if (facts.key === key || facts.key.endsWith(`.${key}`)) return ctx.text.slice(facts.start, facts.end);
  }
  return '';
}

function enclosingText(node: ts.Node, ctx: FileContext): string {
  for (let current = node.parent; current; current = current.parent) {
    if (isFunctionLike(current)) return current.getText(ctx.sf);
  }
  return ctx.text;
}

/** SQS queue URLs end with the queue name. */
function queueName(url: string | undefined): string | undefined {
  if (!url) return undefined;
  return url.includes('/') ? url.slice(url.lastIndexOf('/') + 1) || url : url;
}

/** kafkajs `consumer.subscribe({ topic })` / `{ topics: [...] }`, by receiver, so `run` can name its topics. */
function kafkaTopics(ctx: FileContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'subscribe') continue;
    const arg = call.arguments[0];
    const topic = objectProperty(arg, 'topic') ?? objectProperty(arg, 'topics');
    if (!topic) continue;
    const node = unwrap(topic);
    const names = ts.isArrayLiteralExpression(node) ? node.elements.map((e) => stringValue(e, ctx.index.consts) ?? '?') : [stringValue(node, ctx.index.consts) ?? '?'];
    const key = accessChain(call.expression.expression).join('.');
    const joined = [out.get(key), ...names].filter(Boolean).join(',');
    out.set(key, joined);
    out.set('*', joined);
  }
  return out;
}

/** Bull (v3) `queue.process(…)`: true when the queue is Bull but its name is not literal. */
function bullQueue(receiver: string[], ctx: FileContext): string | true | undefined {
  if (receiver.length !== 1) return undefined;
  const init = ctx.index.consts.get(receiver[0] as string);
  if (!init) return undefined;
  const expr = unwrap(init);
  if (!ts.isNewExpression(expr) && !ts.isCallExpression(expr)) return undefined;
  const origin = ctx.originOf(expr.expression);
  if (origin?.module !== 'bull' && origin?.module !== 'bee-queue') return undefined;
  return stringValue(expr.arguments?.[0], ctx.index.consts) ?? true;
}

/** Lambda handlers typed with aws-lambda's SQS types. */
function recordSqsLambda(ctx: FileContext, facts: FileFacts): void {
  if (![...ctx.index.imports.values()].some((b) => b.module === 'aws-lambda' && /^SQS(Event|Handler|BatchResponse)$/.test(b.imported))) return;
  for (const statement of ctx.sf.statements) {
    const fns: Array<[ts.Node, ts.Node | undefined]> = [];
    if (ts.isFunctionDeclaration(statement)) fns.push([statement, statement.parameters[0]?.type]);
    else if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer && unwrap(d.initializer);
        const typeText = d.type?.getText(ctx.sf) ?? '';
        const param = init && isFunctionLike(init) ? init.parameters[0]?.type : undefined;
        if (/SQSHandler/.test(typeText) || param) fns.push([d, /SQSHandler/.test(typeText) ? d.type : param]);
      }
    }
    for (const [node, type] of fns) {
      if (type && /SQS(Event|Handler)/.test(type.getText(ctx.sf))) {
        push(ctx, facts, node, 'sqs', undefined, undefined, node.getText(ctx.sf));
      }
    }
  }
}

/** @nestjs/bullmq / @nestjs/bull processors, microservice patterns, golevelup RabbitMQ, nestjs-sqs handlers. */
function recordNestConsumers(ctx: FileContext, facts: FileFacts): void {
  const brokerOfPattern = ctx.pkg.stack.brokers.find((b) => b === 'kafka' || b === 'rabbitmq' || b === 'nats') ?? 'nestjs-microservices';
  for (const cls of ctx.index.classes) {
    const processor = decoratorsOf(cls).map(decoratorCall).find((d) => d?.name === 'Processor');
    if (processor) {
      const origin = ctx.index.imports.get('Processor')?.module ?? '';
      const broker = origin === '@nestjs/bull' ? 'bull' : 'bullmq';
      const arg = processor.args[0];
      const queue = stringValue(arg, ctx.index.consts) ?? stringValue(objectProperty(arg, 'name'), ctx.index.consts);
      push(ctx, facts, cls, broker, queue, undefined, cls.getText(ctx.sf));
      continue;
    }
    for (const member of cls.members) {
      if (!ts.isMethodDeclaration(member)) continue;
      for (const d of decoratorsOf(member).map(decoratorCall)) {
        if (!d) continue;
        const text = member.getText(ctx.sf);
        if (d.name === 'EventPattern' || d.name === 'MessagePattern') push(ctx, facts, member, brokerOfPattern, stringValue(d.args[0], ctx.index.consts), undefined, text);
        else if (d.name === 'RabbitSubscribe') push(ctx, facts, member, 'rabbitmq', stringValue(objectProperty(d.args[0], 'queue'), ctx.index.consts), undefined, text);
        else if (d.name === 'SqsMessageHandler') push(ctx, facts, member, 'sqs', stringValue(d.args[0], ctx.index.consts), undefined, text);
      }
    }
  }
}
