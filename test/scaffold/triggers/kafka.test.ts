import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Generated } from '../generateInto.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

/**
 * kafkajs without a Kafka: the generated eachMessage handler driven by a fake broker that redelivers from the last
 * committed offset, the way a consumer-group rebalance or a restart does. The store is the real PostgreSQL.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`kafkajs adapter test skipped: ${skip}`);

interface Record_ {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | undefined>;
}

/** A one-partition topic log with a committed offset, and a commitOffsets() like kafkajs's consumer. */
class FakeBroker {
  readonly log: Record_[] = [];
  committed = 0n;
  readonly commits: string[] = [];
  append(value: string, headers?: Record<string, string>): void {
    this.log.push({ offset: String(this.log.length), key: null, value: Buffer.from(value), headers });
  }
  async commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string }>): Promise<void> {
    for (const { offset } of offsets) {
      this.commits.push(offset);
      if (BigInt(offset) > this.committed) this.committed = BigInt(offset);
    }
  }
  /** Delivers from the committed offset until the end, or until `crashAt` (that delivery's handler never returns). */
  async deliver(eachMessage: (payload: Loose) => Promise<void>, crashAt?: number): Promise<void> {
    for (let index = Number(this.committed); index < this.log.length; index++) {
      const message = this.log[index]!;
      const payload = { topic: 'orders', partition: 0, message, heartbeat: async () => {}, pause: () => () => {} };
      if (index === crashAt) {
        void eachMessage(payload);
        return;
      }
      await eachMessage(payload);
    }
  }
}

describe.skipIf(skip !== undefined)('kafkajs adapter with a fake broker', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Record<string, Loose>;

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await triggersModel());
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'kafka');
    await schema.pool.query('CREATE TABLE effects (order_id text NOT NULL)');
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    scaffold = { ...(await load('index.js')), ...(await load('consumers/kafka.js')) };
  });

  afterAll(async () => {
    await schema?.drop();
  });

  it('commits only after completion; redelivery from the committed offset and a re-produced message run once', async () => {
    const { core } = scaffold.createIdempotency({ pool: schema.pool, principal: () => 'global' });
    const broker = new FakeBroker();
    let claimed!: () => void;
    const crashed = new Promise<void>((resolve) => (claimed = resolve));
    const eachMessage = scaffold.kafkaEachMessage(broker, {
      core,
      action: scaffold.ACTIONS.fulfilOrder,
      handle: async (payload: Loose, context: Loose) => {
        const order = payload.message.value.toString();
        // The consumer process dies here: it never returns, and its claim stays until the lease lapses.
        if (order === 'order-2') {
          claimed();
          await new Promise(() => {});
        }
        await (context.db ?? schema.pool).query('INSERT INTO effects (order_id) VALUES ($1)', [order]);
      },
    });
    broker.append('order-1', { 'message-id': 'msg-1' });
    broker.append('order-2', { 'message-id': 'msg-2' });
    await broker.deliver(eachMessage, 1);
    // The dying delivery holds its claim before anything is redelivered: on a busy machine the redelivery could
    // otherwise claim first, and the dying one's "busy" would reject with no one to hear it.
    await crashed;
    expect(broker.committed).toBe(1n);
    // The producer retried order-2 as a new record with the same message id, and a restarted consumer redelivers.
    broker.append('order-2', { 'message-id': 'msg-2' });
    const rerun = scaffold.kafkaEachMessage(broker, {
      core,
      action: scaffold.ACTIONS.fulfilOrder,
      handle: async (payload: Loose, context: Loose) => {
        await (context.db ?? schema.pool).query('INSERT INTO effects (order_id) VALUES ($1)', [payload.message.value.toString()]);
      },
    });
    await expectEventuallyDelivered(broker, rerun);
    expect(broker.committed).toBe(3n);
    const { rows } = await schema.pool.query('SELECT order_id, count(*)::int AS n FROM effects GROUP BY order_id ORDER BY order_id');
    expect(rows).toEqual([{ order_id: 'order-1', n: 1 }, { order_id: 'order-2', n: 1 }]);
  });

  it('without a message-id header the key is topic/partition/offset', () => {
    expect(scaffold.kafkaMessageId({ topic: 'orders', partition: 3, message: { offset: '42', headers: {} } })).toBe('orders/3/42');
  });
});

/**
 * The dead consumer's claim on order-2 is live until its lease lapses; a redelivery meanwhile is "busy" and
 * throws, as kafkajs would see it (it restarts from the committed offset), and is simply delivered again.
 */
async function expectEventuallyDelivered(broker: FakeBroker, eachMessage: (payload: Loose) => Promise<void>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await broker.deliver(eachMessage);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
