import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Generated } from '../generateInto.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';
import { eventually, NATS_SERVERS, RABBITMQ_URL, REDIS, serviceSkipReason } from './services.js';

/**
 * Issue #18's acceptance for queue consumers, on the real brokers: a consumer process is SIGKILLed in the middle
 * of its handler, the broker redelivers to a second process, and the same message is then published again. The
 * effect (a row in PostgreSQL) must exist exactly once. The consumer action runs in lease mode with a short lease,
 * so the redelivery first meets a live claim (busy: redelivered later), then takes the lapsed claim over.
 * The effect count is the assertion that matters; everything else is allowed to vary with the machine's load.
 */
const pgSkip = await postgresSkipReason();

interface Broker {
  name: 'bullmq' | 'bull' | 'amqplib' | 'nats';
  skip: string | undefined;
  env: Record<string, string>;
  setup(queue: string, scaffold: string): Promise<void>;
  /** Publishes one order message; resolves false when the broker itself dropped it as a duplicate. */
  publish(orderId: string): Promise<boolean>;
  /** The message id the consumer keys on (BullMQ: the deterministic job id). */
  messageId(orderId: string): string;
  teardown(): Promise<void>;
}

function bullmqBroker(skip: string | undefined): Broker {
  const prefix = `idem-test-${randomUUID().slice(0, 8)}`;
  let queue: Loose;
  let jobIdFor: Loose;
  let action: Loose;
  return {
    name: 'bullmq',
    skip,
    env: { REDIS_HOST: REDIS.host, REDIS_PORT: String(REDIS.port), BULL_PREFIX: prefix },
    async setup(name, scaffold) {
      const { Queue } = await import('bullmq');
      ({ jobIdFor } = await import(`${scaffold}/consumers/bullmq.js`));
      ({ ACTIONS: { fulfilOrder: action } } = await import(`${scaffold}/index.js`));
      queue = new Queue(name, { connection: REDIS, prefix });
    },
    async publish(orderId) {
      const job = await queue.add('fulfil', { orderId }, { jobId: jobIdFor(action, { orderId }), attempts: 50, backoff: { type: 'fixed', delay: 300 }, removeOnComplete: true, removeOnFail: true });
      return job !== undefined;
    },
    messageId: (orderId) => jobIdFor(action, { orderId }),
    async teardown() {
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
    },
  };
}

/** Legacy Bull (v4): the same contract as BullMQ through bullProcessor, on its own Redis key prefix. */
function bullBroker(skip: string | undefined): Broker {
  const prefix = `idem-test-bull-${randomUUID().slice(0, 8)}`;
  let queue: Loose;
  let jobIdFor: Loose;
  let action: Loose;
  return {
    name: 'bull',
    skip,
    env: { REDIS_HOST: REDIS.host, REDIS_PORT: String(REDIS.port), BULL_PREFIX: prefix },
    async setup(name, scaffold) {
      const { default: Bull } = await import('bull');
      ({ jobIdFor } = await import(`${scaffold}/consumers/bull.js`));
      ({ ACTIONS: { fulfilOrder: action } } = await import(`${scaffold}/index.js`));
      queue = new Bull(name, { redis: REDIS, prefix });
      await queue.isReady();
    },
    async publish(orderId) {
      const jobId = jobIdFor(action, { orderId });
      const job = await queue.add('fulfil', { orderId }, { jobId, attempts: 50, backoff: { type: 'fixed', delay: 300 }, removeOnComplete: true, removeOnFail: true });
      return job?.id === jobId;
    },
    messageId: (orderId) => jobIdFor(action, { orderId }),
    async teardown() {
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
    },
  };
}

function amqpBroker(skip: string | undefined): Broker {
  let connection: Loose;
  let channel: Loose;
  let queue = '';
  let publishWithId: Loose;
  return {
    name: 'amqplib',
    skip,
    env: { RABBITMQ_URL },
    async setup(name, scaffold) {
      const amqp = await import('amqplib');
      ({ publishWithId } = await import(`${scaffold}/consumers/amqplib.js`));
      queue = name;
      connection = await amqp.connect(RABBITMQ_URL);
      channel = await connection.createConfirmChannel();
      await channel.assertQueue(queue, { durable: false });
      await channel.assertExchange(`${queue}.dlx`, 'fanout', { durable: false });
    },
    async publish(orderId) {
      await publishWithId(channel, queue, Buffer.from(JSON.stringify({ orderId })), orderId);
      return true;
    },
    messageId: (orderId) => orderId,
    async teardown() {
      await channel?.deleteQueue(queue).catch(() => undefined);
      await channel?.deleteExchange(`${queue}.dlx`).catch(() => undefined);
      await connection?.close().catch(() => undefined);
    },
  };
}

function natsBroker(skip: string | undefined): Broker {
  let nc: Loose;
  let jsm: Loose;
  let stream = '';
  let publishWithId: Loose;
  return {
    name: 'nats',
    skip,
    env: { NATS_URL: NATS_SERVERS },
    async setup(name, scaffold) {
      const { connect, nanos, AckPolicy } = await import('nats');
      ({ publishWithId } = await import(`${scaffold}/consumers/nats.js`));
      stream = name.replace(/[^A-Za-z0-9_-]/g, '_');
      nc = await connect({ servers: NATS_SERVERS });
      jsm = await nc.jetstreamManager();
      // A short duplicate window, so the test can publish the same Nats-Msg-Id again after it (consumer-side dedupe).
      await jsm.streams.add({ name: stream, subjects: [`${stream}.orders`], duplicate_window: nanos(1_000) });
      await jsm.consumers.add(stream, { durable_name: stream, ack_policy: AckPolicy.Explicit, ack_wait: nanos(3_000) });
    },
    async publish(orderId) {
      const ack = await publishWithId(nc.jetstream(), `${stream}.orders`, new TextEncoder().encode(JSON.stringify({ orderId })), orderId);
      return !ack.duplicate;
    },
    messageId: (orderId) => orderId,
    async teardown() {
      await jsm?.streams.delete(stream).catch(() => undefined);
      await nc?.close();
    },
  };
}

const redisSkip = await serviceSkipReason('Redis', REDIS.host, REDIS.port, 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no');
const BROKERS: Broker[] = [
  bullmqBroker(redisSkip),
  amqpBroker(await serviceSkipReason('RabbitMQ', '127.0.0.1', Number(new URL(RABBITMQ_URL).port || 5672), 'rabbitmq-server -detached')),
  natsBroker(await serviceSkipReason('NATS', '127.0.0.1', Number(NATS_SERVERS.split(':').pop()), 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server')),
  bullBroker(redisSkip),
];
for (const broker of BROKERS) if (broker.skip) console.warn(`${broker.name} consumer acceptance skipped: ${broker.skip}`);

describe.skipIf(pgSkip !== undefined)('consumers on real brokers: SIGKILL mid-handler and duplicate publish run the effect once', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold = '';
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    const model = await triggersModel();
    generated = await generateTriggersAndCompile(model);
    expect(generated.tscOutput).toBe('');
    await copyFile(path.join(import.meta.dirname, 'worker.mjs.txt'), path.join(generated.dir, 'worker.mjs'));
    schema = await createSchema(generated, 'brokers');
    await schema.pool.query('CREATE TABLE effects (message_id text NOT NULL, worker int NOT NULL)');
    scaffold = pathToFileURL(generated.outDir).href;
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await schema?.drop();
  });

  function startWorker(broker: Broker, queue: string, holdMs: number) {
    const child = spawn(process.execPath, [path.join(generated.dir, 'worker.mjs'), broker.name, scaffold, queue, String(holdMs)], {
      env: { ...process.env, ...broker.env, SCHEMA_URL: schema.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const lines: string[] = [];
    child.stdout!.setEncoding('utf8').on('data', (text: string) => lines.push(...text.split('\n').filter(Boolean)));
    const seen = (what: string, count = 1) =>
      eventually(`${broker.name} worker ${child.pid}: "${what}"`, async () => {
        if (child.exitCode !== null) throw new Error(`${broker.name} worker exited (${child.exitCode}): ${lines.join(' | ')}`);
        return lines.filter((line) => line === what).length >= count ? true : undefined;
      });
    return { child, lines, seen };
  }

  const effects = async (id: string) => (await schema.pool.query<{ worker: number }>('SELECT worker FROM effects WHERE message_id = $1', [id])).rows;

  describe.each(BROKERS)('$name', (broker) => {
    it.skipIf(broker.skip !== undefined)('redelivery after SIGKILL, then the same message published again: one effect', async () => {
      const queue = `idem-orders-${randomUUID().slice(0, 8)}`;
      await broker.setup(queue, scaffold);
      try {
        const orderId = `order-${randomUUID().slice(0, 8)}`;
        const doomed = startWorker(broker, queue, 120_000);
        await doomed.seen('ready');
        expect(await broker.publish(orderId)).toBe(true);
        await doomed.seen(`started ${orderId}`);
        doomed.child.kill('SIGKILL');

        const survivor = startWorker(broker, queue, 0);
        await survivor.seen('ready');
        await survivor.seen('outcome done');
        expect(await effects(orderId)).toEqual([{ worker: survivor.child.pid }]);
        const { rows } = await schema.pool.query('SELECT status, attempts FROM idempotency_store WHERE key = $1', [`fulfilOrder:${broker.messageId(orderId)}`]);
        // attempts > 1: the survivor took the dead consumer's claim over (more only if a loaded machine stalled it).
        expect(rows).toEqual([{ status: 'COMPLETED', attempts: expect.any(Number) }]);
        expect(rows[0].attempts).toBeGreaterThanOrEqual(2);

        // The same message again. JetStream drops a repeat inside its duplicate window itself; past the window it
        // is stored again and only the consumer's record stops it.
        await eventually('a publish the broker accepts', async () => ((await broker.publish(orderId)) ? true : undefined));
        await survivor.seen('outcome duplicate');
        expect(await effects(orderId)).toHaveLength(1);
      } finally {
        await broker.teardown();
      }
    });
  });
  it.skipIf(BROKERS[1]!.skip !== undefined)('amqplib: a poison message is retried maxAttempts times, marked FAILED, and dead-lettered once', async () => {
    const amqp = await import('amqplib');
    const queue = `idem-poison-${randomUUID().slice(0, 8)}`;
    const connection = await amqp.connect(RABBITMQ_URL);
    const channel = await connection.createConfirmChannel();
    try {
      await channel.assertQueue(queue, { durable: false });
      await channel.assertExchange(`${queue}.dlx`, 'fanout', { durable: false });
      const dead = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(dead.queue, `${queue}.dlx`, '');
      const worker = startWorker(BROKERS[1]!, queue, 0);
      await worker.seen('ready');
      const orderId = `poison-${randomUUID().slice(0, 8)}`;
      const { publishWithId } = await import(`${scaffold}/consumers/amqplib.js`);
      await publishWithId(channel, queue, Buffer.from(JSON.stringify({ orderId })), orderId);
      await worker.seen('outcome dead');
      // Default maxAttempts is 5: four failures republished with the attempt counted, the fifth dead-lettered.
      expect(worker.lines.filter((line) => line === `started ${orderId}`)).toHaveLength(5);
      const letter = await eventually('the dead letter', async () => (await channel.get(dead.queue, { noAck: true })) || undefined);
      expect(JSON.parse(letter.content.toString())).toEqual({ orderId });
      expect(letter.properties.messageId).toBe(orderId);
      expect(String(letter.properties.headers?.['x-idempotency-error'])).toContain('cannot be fulfilled');
      const { rows } = await schema.pool.query('SELECT status, response_status FROM idempotency_store WHERE key = $1', [`fulfilOrder:${orderId}`]);
      expect(rows).toEqual([{ status: 'FAILED', response_status: 500 }]);
      // A redelivery of the dead message is acknowledged without running the handler.
      await publishWithId(channel, queue, Buffer.from(JSON.stringify({ orderId })), orderId);
      await worker.seen('outcome duplicate');
      expect(worker.lines.filter((line) => line === `started ${orderId}`)).toHaveLength(5);
    } finally {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(`${queue}.dlx`).catch(() => undefined);
      await connection.close().catch(() => undefined);
    }
  });
});
