import { ts } from 'ts-morph';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { Detector } from './detectorTypes.js';

/** Broker client modules and the broker each is for; a file must import one for its calls to count. */
const BROKER_MODULES: Record<string, string> = {
  kafkajs: 'kafka',
  '@confluentinc/kafka-javascript': 'kafka',
  amqplib: 'rabbitmq',
  'amqplib/callback_api': 'rabbitmq',
  'amqp-connection-manager': 'rabbitmq',
  bullmq: 'bullmq',
  bull: 'bull',
  '@aws-sdk/client-sqs': 'sqs',
  nats: 'nats',
  '@nats-io/transport-node': 'nats',
};

/**
 * Functions that publish to a message broker: kafkajs `producer.send({ topic, messages })`, amqplib
 * `channel.publish(exchange, key, content)` / `sendToQueue(queue, content)`, BullMQ and Bull `queue.add(name, data)`,
 * SQS `new SendMessageCommand(…)`, NATS `publish(subject, data)`, in a file that imports the broker's client. The seeds
 * of an endpoint's `publishes` (Bun-Hono-KafkaJS-Boilerplate's POST /products publishes products.created).
 */
export const publishes: Detector = {
  name: 'broker-publishes',
  mentions: /kafkajs|kafka-javascript|amqplib|amqp-connection-manager|bullmq|['"]bull['"]|client-sqs|nats|\bmessages\s*:/,
  detect(ctx, facts) {
    const brokers = brokersImported([...ctx.index.imports.values()].map((binding) => binding.module));
    const sites = publishSites(ctx.sf, ctx.text, brokers, ctx.index.calls, ctx.index.news, (name) => ctx.index.consts.get(name));
    for (const { node, broker } of sites) facts.publishFunctions.push(...enclosingFunctions(node).keys.map((key) => ({ key, broker })));
  },
};

export interface PublishSite {
  node: ts.CallExpression | ts.NewExpression;
  broker: string;
  /** The topic, queue or subject, when the call names it with a string. */
  topic?: string;
}

/** The brokers whose client a file imports (module names as written in its import or require). */
export function brokersImported(modules: Iterable<string>): Set<string> {
  const brokers = new Set<string>();
  for (const module of modules) if (Object.hasOwn(BROKER_MODULES, module)) brokers.add(BROKER_MODULES[module]!);
  return brokers;
}

/** The publish calls among `calls` and `news` of one file (see `publishes`); shared with the code facts. */
export function publishSites(sf: ts.SourceFile, text: string, imported: ReadonlySet<string>, calls: readonly ts.CallExpression[], news: readonly ts.NewExpression[], constOf: (name: string) => ts.Expression | undefined): PublishSite[] {
  const brokers = new Set(imported);
  // kafkajs' `send({ topic, messages })` tells itself: the producer is often made in another module.
  if (/\bmessages\b/.test(text) && /\btopic\b/.test(text)) brokers.add('kafka-shape');
  if (brokers.size === 0) return [];
  const sites: PublishSite[] = [];
  for (const call of calls) {
    const broker = publishCall(call, brokers, sf, constOf);
    if (broker) sites.push({ node: call, broker, ...topicOf(call, broker) });
  }
  if (brokers.has('sqs')) {
    for (const created of news) {
      if (ts.isIdentifier(created.expression) && /^SendMessage(Batch)?Command$/.test(created.expression.text)) sites.push({ node: created, broker: 'sqs' });
    }
  }
  return sites.sort((a, b) => a.node.pos - b.node.pos);
}

/** `{ topic: 'products.created' }` of a Kafka send; the queue of sendToQueue; the subject of a NATS publish. */
function topicOf(call: ts.CallExpression, broker: string): { topic?: string } {
  const first = call.arguments[0];
  if (broker === 'kafka' && first && ts.isObjectLiteralExpression(first)) {
    const topic = first.properties.find((p) => p.name && ts.isIdentifier(p.name) && p.name.text === 'topic');
    const value = topic && ts.isPropertyAssignment(topic) ? topic.initializer : undefined;
    return value && ts.isStringLiteralLike(value) ? { topic: value.text } : {};
  }
  const named = broker === 'rabbitmq' && ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === 'publish' ? call.arguments[1] : first;
  return named && ts.isStringLiteralLike(named) && named.text !== '' ? { topic: named.text } : {};
}

function publishCall(call: ts.CallExpression, brokers: ReadonlySet<string>, sf: ts.SourceFile, constOf: (name: string) => ts.Expression | undefined): string | undefined {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return undefined;
  const method = callee.name.text;
  const args = call.arguments;
  const first = args[0];
  if ((brokers.has('kafka') || brokers.has('kafka-shape')) && (method === 'send' || method === 'sendBatch') && first && ts.isObjectLiteralExpression(first)) {
    const keys = new Set(first.properties.flatMap((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : [])));
    if (brokers.has('kafka') ? keys.has('messages') || keys.has('topicMessages') : (keys.has('topic') && keys.has('messages')) || keys.has('topicMessages')) return 'kafka';
  }
  if (brokers.has('rabbitmq') && ((method === 'publish' && args.length >= 3) || (method === 'sendToQueue' && args.length >= 2))) return 'rabbitmq';
  for (const queue of ['bullmq', 'bull'] as const) {
    // `queue.add(name, data)` / `queue.add(data)` (Bull) on something the file's code calls a queue, never Set#add.
    if (brokers.has(queue) && (method === 'add' || method === 'addBulk') && args.length >= 1 && isQueue(callee.expression, sf, constOf)) return queue;
  }
  if (brokers.has('nats') && method === 'publish' && args.length >= 1 && (ts.isStringLiteralLike(first!) || ts.isIdentifier(first!) || ts.isTemplateExpression(first!))) return 'nats';
  return undefined;
}

/** A receiver named as a queue (`emailQueue`, `this.queue`), or a const the file makes with `new Queue(…)`. */
function isQueue(receiver: ts.Expression, sf: ts.SourceFile, constOf: (name: string) => ts.Expression | undefined): boolean {
  if (/queue/i.test(receiver.getText(sf))) return true;
  const made = ts.isIdentifier(receiver) ? constOf(receiver.text) : undefined;
  return made !== undefined && ts.isNewExpression(made) && ts.isIdentifier(made.expression) && made.expression.text === 'Queue';
}
