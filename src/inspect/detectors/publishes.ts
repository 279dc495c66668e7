import { ts } from 'ts-morph';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { Detector, FileContext } from './detectorTypes.js';

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
    const brokers = new Set<string>();
    for (const binding of ctx.index.imports.values()) {
      const broker = BROKER_MODULES[binding.module];
      if (broker) brokers.add(broker);
    }
    // kafkajs' `send({ topic, messages })` tells itself: the producer is often made in another module.
    if (/\bmessages\b/.test(ctx.text) && /\btopic\b/.test(ctx.text)) brokers.add('kafka-shape');
    if (brokers.size === 0) return;
    const sites: Array<{ node: ts.Node; broker: string }> = [];
    for (const call of ctx.index.calls) {
      const broker = publishCall(call, brokers, ctx);
      if (broker) sites.push({ node: call, broker });
    }
    if (brokers.has('sqs')) {
      for (const created of ctx.index.news) {
        if (ts.isIdentifier(created.expression) && /^SendMessage(Batch)?Command$/.test(created.expression.text)) sites.push({ node: created, broker: 'sqs' });
      }
    }
    for (const { node, broker } of sites) facts.publishFunctions.push(...enclosingFunctions(node).keys.map((key) => ({ key, broker })));
  },
};

function publishCall(call: ts.CallExpression, brokers: ReadonlySet<string>, ctx: FileContext): string | undefined {
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
    if (brokers.has(queue) && (method === 'add' || method === 'addBulk') && args.length >= 1 && isQueue(callee.expression, ctx)) return queue;
  }
  if (brokers.has('nats') && method === 'publish' && args.length >= 1 && (ts.isStringLiteralLike(first!) || ts.isIdentifier(first!) || ts.isTemplateExpression(first!))) return 'nats';
  return undefined;
}

/** A receiver named as a queue (`emailQueue`, `this.queue`), or a const the file makes with `new Queue(…)`. */
function isQueue(receiver: ts.Expression, ctx: FileContext): boolean {
  if (/queue/i.test(receiver.getText(ctx.sf))) return true;
  const made = ts.isIdentifier(receiver) ? ctx.index.consts.get(receiver.text) : undefined;
  return made !== undefined && ts.isNewExpression(made) && ts.isIdentifier(made.expression) && made.expression.text === 'Queue';
}
