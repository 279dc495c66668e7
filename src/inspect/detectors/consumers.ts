import { ts } from 'ts-morph';
import { accessChain, decoratorCall, decoratorsOf, isFunctionLike, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import type { ConsumerFinding } from '../types.js';
import { messageDedupe, messageIdentity } from './dedupeEvidence.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

const BULLMQ = /^(bullmq|@taskforcesh\/bullmq-pro)$/;
const NATS = /^(nats|@nats-io\/.+)$/;
const AMQP = /^(amqplib|amqplib\/callback_api|amqp-connection-manager)$/;

/** Message and job consumers: each redelivery re-runs the handler, so each is a place that needs dedupe. */
export const consumers: Detector = {
  name: 'consumers',
  mentions: /bullmq|['"]bull['"]|kafkajs|eachMessage|eachBatch|amqp|\.consume\(|SQSEvent|SQSHandler|sqs-consumer|ReceiveMessageCommand|nats|@Processor|@Process\(|EventPattern|MessagePattern|RabbitSubscribe|SqsMessageHandler|pg-boss|\.work\(|agenda|graphile-worker|createFunction|brpop|blpop|bRPop|bLPop|blmove|bLMove|brpoplpush|bRPopLPush/,
  detect(ctx, facts) {
    const modules = new Set([...ctx.index.imports.values()].map((b) => b.module));
    const has = (re: RegExp) => [...modules].some((m) => re.test(m));
    for (const expr of ctx.index.news) {
      const origin = ctx.originOf(expr.expression);
      const args = expr.arguments ?? [];
      if (origin && BULLMQ.test(origin.module) && origin.imported === 'Worker') {
        push(ctx, facts, expr, 'bullmq', stringValue(args[0], ctx.index.consts), args[1]);
        noteWrapper(ctx, facts, expr, args[1], args[0]);
      } else if (origin?.module === '@aws-sdk/client-sqs' && origin.imported === 'ReceiveMessageCommand') {
        push(ctx, facts, expr, 'sqs', queueName(stringValue(objectProperty(args[0], 'QueueUrl'), ctx.index.consts)), undefined, enclosingFunction(expr));
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
        noteWrapper(ctx, facts, call, handler, kafkaTopicExpression(call));
      } else if (method === 'consume' && has(AMQP) && call.arguments.length >= 2) {
        push(ctx, facts, call, 'rabbitmq', stringValue(arg0, ctx.index.consts), call.arguments[1]);
        noteWrapper(ctx, facts, call, call.arguments[1], arg0);
      } else if (method === 'subscribe' && has(NATS) && arg0 && stringValue(arg0, ctx.index.consts) !== undefined) {
        push(ctx, facts, call, 'nats', stringValue(arg0, ctx.index.consts), objectProperty(call.arguments[1], 'callback'), objectProperty(call.arguments[1], 'callback') ? undefined : enclosingFunction(call));
      } else if (method === 'create' && ctx.originOf(call.expression.expression)?.module === 'sqs-consumer') {
        const handler = objectProperty(arg0, 'handleMessage') ?? objectProperty(arg0, 'handleMessageBatch');
        push(ctx, facts, call, 'sqs', queueName(stringValue(objectProperty(arg0, 'queueUrl'), ctx.index.consts)), handler);
      } else if (method === 'process' && bullQueue(receiver, ctx)) {
        const name = bullQueue(receiver, ctx);
        push(ctx, facts, call, 'bull', name === true ? undefined : name, call.arguments[call.arguments.length - 1]);
      } else if (method === 'work' && has(/^pg-boss$/) && arg0) {
        push(ctx, facts, call, 'pg-boss', stringValue(arg0, ctx.index.consts), call.arguments[call.arguments.length - 1]);
        noteWrapper(ctx, facts, call, call.arguments[call.arguments.length - 1], arg0);
      } else if (method === 'define' && has(/^(agenda|@hokify\/agenda)$/) && arg0) {
        push(ctx, facts, call, 'agenda', stringValue(arg0, ctx.index.consts), call.arguments[call.arguments.length - 1]);
      }
    }
    recordSqsLambda(ctx, facts);
    recordNestConsumers(ctx, facts);
    recordGraphileWorker(ctx, facts);
    recordInngest(ctx, facts);
    recordRedisListLoops(ctx, facts);
  },
};

function push(ctx: FileContext, facts: FileFacts, node: ts.Node, broker: string, queue: string | undefined, handler: ts.Expression | undefined, body?: ts.Node, job?: string): void {
  const source = body ?? handlerNode(handler, ctx);
  const text = source ? source.getText(ctx.sf) : '';
  const scanned = source ? messageDedupe([{ file: ctx.rel, text, line: ctx.line(source) }]) : {};
  const wrapped = scanned.evidence ? undefined : scaffoldWrapper(ctx, node, source);
  const evidence = scanned.evidence ?? wrapped;
  const perAttemptClaim = wrapped ? undefined : scanned.perAttemptClaim;
  const messageId = messageIdentity(text);
  const finding: ConsumerFinding = {
    kind: 'consumer',
    id: [broker, queue ?? (job ? undefined : '?'), job].filter(Boolean).join(' '),
    file: ctx.rel,
    line: ctx.line(node),
    broker,
    ...(queue ? { queue } : {}),
    dedupes: evidence !== undefined,
    ...(job ? { job } : {}),
    ...(messageId ? { messageId } : {}),
    ...(evidence ? { dedupeEvidence: evidence } : {}),
    ...(perAttemptClaim ? { perAttemptClaim } : {}),
  };
  facts.findings.push(finding);
}

/**
 * The scaffold's consumer wrappers (`apply` wires them): each claims the message id before the `handle` of its options
 * runs. The value is the position of that options argument.
 */
export const SCAFFOLD_WRAPPERS: ReadonlyMap<string, number> = new Map([
  ['bullmqProcessor', 0],
  ['bullProcessor', 0],
  ['idempotentHandler', 0],
  ['natsHandler', 0],
  ['kafkaEachMessage', 1],
  ['sqsHandler', 1],
  ['consumeIdempotently', 1],
  ['pollIdempotently', 1],
]);

/**
 * The generated wrapper around this consumer, imported from the project (a relative or `@/` path, never a package):
 * in the registration (`new Worker(q, bullmqProcessor({ … }))`), or, for a NestJS processor method, in the
 * `<method>Once` field apply builds next to it.
 */
function scaffoldWrapper(ctx: FileContext, node: ts.Node, source: ts.Node | undefined): { file: string; line: number; detail: string } | undefined {
  const names = [...ctx.index.imports].filter(([, b]) => SCAFFOLD_WRAPPERS.has(b.imported) && (b.module.startsWith('.') || /^[@~#]\//.test(b.module))).map(([local]) => local);
  if (names.length === 0) return undefined;
  const pieces: ts.Node[] = [node, ...(source ? [source] : [])];
  if (source && ts.isMethodDeclaration(source) && ts.isClassLike(source.parent)) {
    const field = `${source.name.getText(ctx.sf)}Once`;
    const member = source.parent.members.find((m) => ts.isPropertyDeclaration(m) && m.name.getText(ctx.sf) === field);
    if (member) pieces.push(member);
  }
  for (const piece of pieces) {
    const text = piece.getText(ctx.sf);
    const name = names.find((local) => new RegExp(`\\b${local.replace(/\$/g, '\\$')}\\s*(<[^>]*>)?\\(`).test(text));
    if (name) return { file: ctx.rel, line: ctx.line(piece), detail: `the generated ${name}() claims each message id before the handler runs` };
  }
  return undefined;
}

/** The handler's source: inline, or a same-file function / method referenced by name. */
function handlerNode(handler: ts.Expression | undefined, ctx: FileContext): ts.Node | undefined {
  if (!handler) return undefined;
  const node = unwrap(handler);
  if (isFunctionLike(node)) return node;
  const name = ts.isIdentifier(node) ? node.text : ts.isPropertyAccessExpression(node) ? node.name.text : undefined;
  if (!name) return undefined;
  let found: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name && ts.isIdentifier(n.name) && n.name.text === name) found = n;
    else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name && n.initializer && isFunctionLike(unwrap(n.initializer))) found = n;
    else ts.forEachChild(n, visit);
  };
  visit(ctx.sf);
  return found;
}

/**
 * The registration sits in a function that received its handler (`subscribe(topic, groupId, handler)` running
 * `await handler(parsed)` in eachMessage): record the wrapper, so its callers, which say what each consumer does and
 * which topic it reads, become the findings (resolve/consumerWrappers.ts).
 */
function noteWrapper(ctx: FileContext, facts: FileFacts, registration: ts.Node, handler: ts.Expression | undefined, queue: ts.Expression | undefined): void {
  const fn = enclosingFunction(registration);
  const named = fn && wrapperName(fn);
  const finding = facts.findings.at(-1);
  if (!fn || !named || finding?.kind !== 'consumer') return;
  const params = fn.parameters.map((p) => (ts.isIdentifier(p.name) ? p.name.text : undefined));
  const paramIndex = (expr: ts.Expression | undefined) => {
    const node = expr && unwrap(expr);
    return node && ts.isIdentifier(node) ? params.indexOf(node.text) : -1;
  };
  let handlerIndex = paramIndex(handler);
  const body = handler && unwrap(handler);
  if (handlerIndex < 0 && body && isFunctionLike(body)) {
    // The inline handler calls one of the wrapper's parameters: that parameter is what each caller's consumer does.
    const visit = (n: ts.Node): void => {
      if (handlerIndex >= 0) return;
      if (ts.isCallExpression(n)) handlerIndex = paramIndex(n.expression);
      ts.forEachChild(n, visit);
    };
    visit(body);
  }
  if (handlerIndex < 0) return;
  const queueIndex = paramIndex(queue);
  facts.consumerWrappers.push({ finding, ...named, handlerIndex, ...(queueIndex >= 0 ? { queueIndex } : {}) });
}

/** A function declaration, a class's method, or a function assigned to a name: something a caller can call by name. */
function wrapperName(fn: ts.FunctionLikeDeclaration): { name: string; className?: string; implementing?: string[] } | undefined {
  if (ts.isFunctionDeclaration(fn) && fn.name) return { name: fn.name.text };
  if (ts.isMethodDeclaration(fn) && ts.isIdentifier(fn.name) && ts.isClassDeclaration(fn.parent) && fn.parent.name) {
    const implementing = (fn.parent.heritageClauses ?? []).filter((c) => c.token === ts.SyntaxKind.ImplementsKeyword).flatMap((c) => c.types.flatMap((t) => (ts.isIdentifier(t.expression) ? [t.expression.text] : [])));
    // `export default interface Queue` (the port) or the class itself as the file's default export: a default import.
    const defaulted = defaultExportName(fn.getSourceFile());
    const names = [...implementing, ...(defaulted !== undefined && (defaulted === fn.parent.name.text || implementing.includes(defaulted)) ? ['<default>'] : [])];
    return { name: fn.name.text, className: fn.parent.name.text, ...(names.length > 0 ? { implementing: names } : {}) };
  }
  const holder = fn.parent;
  if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && holder) {
    if (ts.isVariableDeclaration(holder) && ts.isIdentifier(holder.name)) return { name: holder.name.text };
    if (ts.isPropertyDeclaration(holder) && ts.isIdentifier(holder.name) && ts.isClassDeclaration(holder.parent) && holder.parent.name) return { name: holder.name.text, className: holder.parent.name.text };
  }
  return undefined;
}

/** The name a file exports as its default: `export default interface Queue`, `export default class X`, `export default X`. */
function defaultExportName(sf: ts.SourceFile): string | undefined {
  for (const statement of sf.statements) {
    if ((ts.isInterfaceDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name && statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) return statement.name.text;
    if (ts.isExportAssignment(statement) && !statement.isExportEquals && ts.isIdentifier(statement.expression)) return statement.expression.text;
  }
  return undefined;
}

/** The topic a kafkajs `run` reads, as written in the `subscribe({ topic })` of the same function (a parameter, in a wrapper). */
function kafkaTopicExpression(run: ts.CallExpression): ts.Expression | undefined {
  const fn = enclosingFunction(run);
  let found: ts.Expression | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'subscribe') {
      const topic = objectProperty(n.arguments[0], 'topic') ?? objectProperty(n.arguments[0], 'topics');
      const node = topic && unwrap(topic);
      found = node && ts.isArrayLiteralExpression(node) && node.elements.length === 1 ? node.elements[0] : node;
    }
    ts.forEachChild(n, visit);
  };
  if (fn) visit(fn);
  return found;
}

function enclosingFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (isFunctionLike(current)) return current;
  }
  return undefined;
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
        push(ctx, facts, node, 'sqs', undefined, undefined, node);
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
      const queue = nameOf(arg, ctx) ?? nameOf(objectProperty(arg, 'name'), ctx);
      // @Process('job') methods (Bull) each handle one job name; a BullMQ WorkerHost has one process() method.
      const handlers = cls.members.filter(ts.isMethodDeclaration).flatMap((m) => {
        const d = decoratorsOf(m).map(decoratorCall).find((x) => x?.name === 'Process');
        if (!d) return [];
        const job = nameOf(d.args[0], ctx) ?? nameOf(objectProperty(d.args[0], 'name'), ctx);
        return [{ method: m, job }];
      });
      for (const { method, job } of handlers) push(ctx, facts, method, broker, queue, undefined, method, job);
      if (!handlers.length) {
        const process = cls.members.find((m): m is ts.MethodDeclaration => ts.isMethodDeclaration(m) && m.name.getText(ctx.sf) === 'process');
        push(ctx, facts, cls, broker, queue, undefined, process ?? cls);
      }
      continue;
    }
    for (const member of cls.members) {
      if (!ts.isMethodDeclaration(member)) continue;
      for (const d of decoratorsOf(member).map(decoratorCall)) {
        if (!d) continue;
        const text = member;
        if (d.name === 'EventPattern' || d.name === 'MessagePattern') push(ctx, facts, member, brokerOfPattern, nameOf(d.args[0], ctx), undefined, text);
        else if (d.name === 'RabbitSubscribe') push(ctx, facts, member, 'rabbitmq', stringValue(objectProperty(d.args[0], 'queue'), ctx.index.consts), undefined, text);
        else if (d.name === 'SqsMessageHandler') push(ctx, facts, member, 'sqs', stringValue(d.args[0], ctx.index.consts), undefined, text);
      }
    }
  }
}

/** graphile-worker: `run({ taskList: { sendEmail: async (payload, helpers) => … } })`, a typed `TaskList`, or a `Task` file. */
function recordGraphileWorker(ctx: FileContext, facts: FileFacts): void {
  const bindings = [...ctx.index.imports.entries()].filter(([, b]) => b.module === 'graphile-worker');
  if (!bindings.length) return;
  const lists = new Set<ts.Node>();
  const tasks: Array<[ts.Node, ts.Node, string]> = [];
  for (const call of ctx.index.calls) {
    const origin = ctx.originOf(call.expression);
    if (origin?.module !== 'graphile-worker' || !/^(run|runOnce|runTaskList|runTaskListOnce)$/.test(origin.imported)) continue;
    const taskList = objectProperty(call.arguments[0], 'taskList') ?? (origin.imported.startsWith('runTaskList') ? call.arguments[1] : undefined);
    const literal = taskList && taskListLiteral(taskList, ctx);
    if (literal) lists.add(literal);
  }
  for (const statement of ctx.sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      const type = d.type?.getText(ctx.sf) ?? '';
      const init = d.initializer && unwrap(d.initializer);
      if (/\bTaskList\b/.test(type) && init && ts.isObjectLiteralExpression(init)) lists.add(init);
      else if (/\bTask\b/.test(type) && init && isFunctionLike(init) && ts.isIdentifier(d.name)) tasks.push([d, init, d.name.text]);
    }
  }
  const listed = new Set([...lists].flatMap((l) => (l as ts.ObjectLiteralExpression).properties.map((p) => p.name?.getText(ctx.sf))));
  for (const [decl, init, name] of tasks) if (!listed.has(name)) push(ctx, facts, decl, 'graphile-worker', undefined, undefined, init, taskName(ctx.rel, name));
  for (const list of lists) {
    for (const prop of (list as ts.ObjectLiteralExpression).properties) {
      const name = prop.name ? prop.name.getText(ctx.sf).replace(/^['"]|['"]$/g, '') : undefined;
      if (!name) continue;
      const value = ts.isPropertyAssignment(prop) ? prop.initializer : ts.isShorthandPropertyAssignment(prop) ? prop.name : undefined;
      const body = ts.isMethodDeclaration(prop) ? prop : undefined;
      push(ctx, facts, prop, 'graphile-worker', undefined, value, body, name);
    }
  }
}

function taskListLiteral(expr: ts.Expression, ctx: FileContext): ts.ObjectLiteralExpression | undefined {
  let node = unwrap(expr);
  if (ts.isIdentifier(node)) node = ctx.index.consts.get(node.text) ? unwrap(ctx.index.consts.get(node.text) as ts.Expression) : node;
  return ts.isObjectLiteralExpression(node) ? node : undefined;
}

/** A task file in graphile-worker's task directory is named after its task. */
function taskName(rel: string, variable: string): string {
  return variable === 'task' || variable === 'default' ? rel.slice(rel.lastIndexOf('/') + 1).replace(/\.[cm]?[jt]sx?$/, '') : variable;
}

/** Inngest `createFunction(config, trigger, handler)`: event triggers are consumers; cron triggers are crons (crons.ts). */
function recordInngest(ctx: FileContext, facts: FileFacts): void {
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'createFunction' || call.arguments.length < 2) continue;
    const [config, trigger, handler] = call.arguments;
    const triggers = trigger && ts.isArrayLiteralExpression(unwrap(trigger)) ? (unwrap(trigger) as ts.ArrayLiteralExpression).elements : trigger ? [trigger] : [];
    const events = triggers.map((t) => stringValue(objectProperty(t, 'event'), ctx.index.consts)).filter((e): e is string => e !== undefined);
    if (!events.length) continue;
    const id = stringValue(objectProperty(config, 'id'), ctx.index.consts) ?? stringValue(objectProperty(config, 'name'), ctx.index.consts);
    push(ctx, facts, call, 'inngest', events.join(','), handler ?? call.arguments[call.arguments.length - 1], undefined, id);
  }
}

const BLOCKING_POP = /^(brpop|blpop|bRPop|bLPop|brpoplpush|bRPopLPush|blmove|bLMove|bzpopmin|bzPopMin)$/;

/** A Redis list used as a queue: a blocking pop inside a loop. */
function recordRedisListLoops(ctx: FileContext, facts: FileFacts): void {
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression) || !BLOCKING_POP.test(call.expression.name.text)) continue;
    let loop: ts.Node | undefined;
    for (let current = call.parent; current && !isFunctionLike(current); current = current.parent) {
      if (ts.isWhileStatement(current) || ts.isForStatement(current) || ts.isDoStatement(current)) loop = current;
    }
    const recursive = !loop && enclosingFunction(call);
    if (!loop && !recursive) continue;
    const arg0 = call.arguments[0];
    const keys = arg0 && ts.isArrayLiteralExpression(unwrap(arg0)) ? (unwrap(arg0) as ts.ArrayLiteralExpression).elements.map((e) => stringValue(e, ctx.index.consts) ?? '?').join(',') : stringValue(arg0, ctx.index.consts);
    push(ctx, facts, call, 'redis-list', keys, undefined, loop ?? enclosingFunction(call));
  }
}

/** A literal name, or the constant that holds it when it lives in another file (`DATA_GATHERING_QUEUE`). */
function nameOf(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  if (!expr) return undefined;
  const literal = stringValue(expr, ctx.index.consts);
  if (literal !== undefined) return literal;
  const node = unwrap(expr);
  return ts.isIdentifier(node) || ts.isPropertyAccessExpression(node) ? node.getText(ctx.sf) : undefined;
}
