import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triggerFiles } from '../../../src/scaffold/triggers/index.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

/**
 * The SQS adapter (consumers/sqs.ts) over the real PostgreSQL store, against an in-process fake of SQS: there is no
 * SQS here. The fake answers the four commands the adapter sends through the client's `send` (ReceiveMessage,
 * DeleteMessage, ChangeMessageVisibility, SendMessage) with SQS's semantics as the adapter relies on them: a received
 * message is invisible until deleted or until its visibility timeout lapses (the test lapses it, no clock), each
 * receive raises ApproximateReceiveCount, a receipt handle is per receive. It was not run against real SQS.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`SQS adapter tests skipped: ${skip}`);

interface Stored {
  MessageId: string;
  Body: string;
  MessageAttributes: Record<string, { DataType: string; StringValue?: string }>;
  receives: number;
  receipt?: string;
  visible: boolean;
}

interface Call {
  command: string;
  input: Record<string, Loose>;
}

class FakeSqs {
  readonly queues = new Map<string, Stored[]>();
  readonly calls: Call[] = [];
  private waiters: Array<() => void> = [];
  private watchers: Array<{ match: (call: Call) => boolean; resolve: (call: Call) => void }> = [];

  queue(url: string): Stored[] {
    if (!this.queues.has(url)) this.queues.set(url, []);
    return this.queues.get(url)!;
  }

  /** The visibility timeout of every message in flight lapses: they can be received again. */
  lapse(url: string): void {
    for (const message of this.queue(url)) message.visible = true;
    this.wake();
  }

  /** Resolves with the next call (from now) that matches. */
  next(command: string, match: (input: Record<string, Loose>) => boolean = () => true): Promise<Call> {
    return new Promise((resolve) => this.watchers.push({ match: (call) => call.command === command && match(call.input), resolve }));
  }

  async send(command: { constructor: { name: string }; input: Record<string, Loose> }, options: { abortSignal?: AbortSignal } = {}): Promise<Loose> {
    const name = command.constructor.name.replace(/Command$/, '');
    const { input } = command;
    const answer = await this.answer(name, input, options.abortSignal);
    const call = { command: name, input };
    this.calls.push(call);
    // One watcher per call: two waiting for a DeleteMessage need two of them.
    const at = this.watchers.findIndex((watcher) => watcher.match(call));
    if (at >= 0) this.watchers.splice(at, 1)[0]!.resolve(call);
    return answer;
  }

  private async answer(name: string, input: Record<string, Loose>, signal?: AbortSignal): Promise<Loose> {
    const queue = this.queue(input.QueueUrl);
    switch (name) {
      case 'SendMessage': {
        const MessageId = randomUUID();
        queue.push({ MessageId, Body: input.MessageBody, MessageAttributes: input.MessageAttributes ?? {}, receives: 0, visible: true });
        this.wake();
        return { MessageId };
      }
      case 'ReceiveMessage': {
        // Long polling: wait until a message is visible or the caller aborts.
        for (;;) {
          if (signal?.aborted) throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
          const ready = queue.filter((message) => message.visible).slice(0, input.MaxNumberOfMessages ?? 1);
          if (ready.length > 0) {
            expect(input.MessageSystemAttributeNames).toContain('ApproximateReceiveCount');
            return {
              Messages: ready.map((message) => {
                message.visible = false;
                message.receives += 1;
                message.receipt = randomUUID();
                return {
                  MessageId: message.MessageId,
                  ReceiptHandle: message.receipt,
                  Body: message.Body,
                  MessageAttributes: message.MessageAttributes,
                  Attributes: { ApproximateReceiveCount: String(message.receives) },
                };
              }),
            };
          }
          await new Promise<void>((resolve) => {
            this.waiters.push(resolve);
            signal?.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      }
      case 'DeleteMessage': {
        const at = queue.findIndex((message) => message.receipt === input.ReceiptHandle);
        if (at >= 0) queue.splice(at, 1);
        return {};
      }
      case 'ChangeMessageVisibility': {
        const message = queue.find((item) => item.receipt === input.ReceiptHandle);
        if (message && input.VisibilityTimeout === 0) {
          message.visible = true;
          this.wake();
        }
        return {};
      }
      default:
        throw new Error(`the fake does not answer ${name}`);
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** The outcomes idempotentHandler reports (events.handled), and a promise for the n-th. */
function outcomeLog() {
  const kinds: string[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  return {
    kinds,
    handled: (_action: string, kind: string) => {
      kinds.push(kind);
      for (const waiter of waiting.filter((item) => kinds.length >= item.count)) waiter.resolve();
    },
    reached: (count: number) => (kinds.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve }))),
  };
}

/** A promise the test resolves by hand: a handler held mid-flight. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('the SQS adapter design wiring', () => {
  it('a design whose consumer is on SQS gets consumers/sqs.ts and its wiring', async () => {
    const files = triggerFiles(await triggersModel('sqs'));
    expect(files.map((file) => file.path)).toContain('consumers/sqs.ts');
    const readme = files.find((file) => file.path === 'TRIGGERS.md')!.contents;
    expect(readme).toContain('void pollIdempotently(sqs, { core: idempotency.core, action: ACTIONS.fulfilOrder, queueUrl, deadLetterQueueUrl, handle, signal });');
    expect(readme).toContain('await sendWithId(sqs, queueUrl, body, messageId); // a producer that retries: its own id, read with messageIdOf: messageIdOfAttribute');
  });
});

describe.skipIf(skip !== undefined)('consumers/sqs.ts against an in-process SQS fake (not real SQS) and the real PostgreSQL', () => {
  let schema: Schema;
  let sqsModule: Record<string, Loose>;
  let core: Loose;
  let action: Loose;

  beforeAll(async () => {
    const generated = await generateTriggersAndCompile(await triggersModel('sqs'));
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'sqs');
    const scaffold = pathToFileURL(generated.outDir).href;
    sqsModule = await import(`${scaffold}/consumers/sqs.js`);
    const { createIdempotency, ACTIONS } = await import(`${scaffold}/index.js`);
    ({ core } = createIdempotency({ pool: schema.pool, principal: () => 'global' }));
    action = ACTIONS.fulfilOrder;
  });

  afterAll(async () => {
    await schema?.drop();
  });

  const record = async (id: string) =>
    (await schema.pool.query('SELECT status, attempts FROM idempotency_store WHERE key = $1', [`fulfilOrder:${id}`])).rows;

  it('a producer retry (two SQS messages, one id) runs once; both are deleted; the loop ends on abort', async () => {
    const sqs = new FakeSqs();
    const queueUrl = `https://sqs.test/idem-${randomUUID().slice(0, 8)}`;
    const orderId = `order-${randomUUID().slice(0, 8)}`;
    await sqsModule.sendWithId(sqs, queueUrl, JSON.stringify({ orderId }), orderId);
    await sqsModule.sendWithId(sqs, queueUrl, JSON.stringify({ orderId }), orderId);
    const runs: string[] = [];
    const outcomes: string[] = [];
    const stop = new AbortController();
    const bothDeleted = Promise.all([sqs.next('DeleteMessage'), sqs.next('DeleteMessage')]);
    const loop = sqsModule.pollIdempotently(sqs, {
      core,
      action,
      queueUrl,
      deadLetterQueueUrl: `${queueUrl}-dlq`,
      messageIdOf: sqsModule.messageIdOfAttribute,
      batchSize: 1,
      signal: stop.signal,
      events: { handled: (_action: string, kind: string) => outcomes.push(kind) },
      handle: async (message: Loose) => {
        runs.push(JSON.parse(message.Body).orderId);
      },
    });
    await bothDeleted;
    stop.abort();
    await loop;
    expect(runs).toEqual([orderId]);
    expect(outcomes).toEqual(['done', 'duplicate']);
    expect(sqs.queue(queueUrl)).toEqual([]);
    expect(await record(orderId)).toEqual([{ status: 'COMPLETED', attempts: 1 }]);
  });

  it('without messageIdOf the key is the SQS MessageId, as the design says', async () => {
    const sqs = new FakeSqs();
    const queueUrl = `https://sqs.test/idem-${randomUUID().slice(0, 8)}`;
    const settle = sqsModule.sqsHandler(sqs, { core, action, queueUrl, deadLetterQueueUrl: `${queueUrl}-dlq`, handle: async () => {} });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{}' }));
    const { Messages: [message] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    await settle(message);
    expect(await record(message.MessageId)).toEqual([{ status: 'COMPLETED', attempts: 1 }]);
    expect(sqs.queue(queueUrl)).toEqual([]);
  });

  it('a copy received while another consumer holds the key is made visible later, not deleted, then is a duplicate', async () => {
    const sqs = new FakeSqs();
    const queueUrl = `https://sqs.test/idem-${randomUUID().slice(0, 8)}`;
    const orderId = `order-${randomUUID().slice(0, 8)}`;
    const held = gate();
    const started = gate();
    let runs = 0;
    const settle = sqsModule.sqsHandler(sqs, {
      core,
      action,
      queueUrl,
      deadLetterQueueUrl: `${queueUrl}-dlq`,
      messageIdOf: sqsModule.messageIdOfAttribute,
      handle: async () => {
        runs += 1;
        started.open();
        await held.opened;
      },
    });
    await sqsModule.sendWithId(sqs, queueUrl, '{}', orderId);
    await sqsModule.sendWithId(sqs, queueUrl, '{}', orderId);
    const { Messages: [first, copy] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 2, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    const firstSettled = settle(first);
    await started.opened;
    await settle(copy);
    const visibility = sqs.calls.filter((call) => call.command === 'ChangeMessageVisibility');
    expect(visibility).toHaveLength(1);
    expect(visibility[0]!.input.ReceiptHandle).toBe(copy.ReceiptHandle);
    expect(visibility[0]!.input.VisibilityTimeout).toBeGreaterThan(0);
    expect(sqs.calls.filter((call) => call.command === 'DeleteMessage')).toEqual([]);

    held.open();
    await firstSettled;
    expect(sqs.queue(queueUrl).map((message) => message.MessageId)).toEqual([copy.MessageId]);
    // Its visibility lapses; received again, it is a duplicate: deleted without running.
    sqs.lapse(queueUrl);
    const { Messages: [again] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    await settle(again);
    expect(runs).toBe(1);
    expect(sqs.queue(queueUrl)).toEqual([]);
  });

  it('a failing handler leaves the message for redelivery; a poison message goes to the dead-letter queue once, FAILED', async () => {
    const sqs = new FakeSqs();
    const queueUrl = `https://sqs.test/idem-${randomUUID().slice(0, 8)}`;
    const deadLetterQueueUrl = `${queueUrl}-dlq`;
    const orderId = `poison-${randomUUID().slice(0, 8)}`;
    let runs = 0;
    const outcomes = outcomeLog();
    const stop = new AbortController();
    const options = {
      core,
      action,
      queueUrl,
      deadLetterQueueUrl,
      messageIdOf: sqsModule.messageIdOfAttribute,
      maxAttempts: 3,
      signal: stop.signal,
      events: { handled: outcomes.handled },
      handle: async () => {
        runs += 1;
        throw new Error('this order cannot be fulfilled');
      },
    };
    await sqsModule.sendWithId(sqs, queueUrl, JSON.stringify({ orderId }), orderId);
    const loop = sqsModule.pollIdempotently(sqs, options);
    // Each failure leaves the message in flight (nothing deleted, no visibility change) until its timeout lapses.
    for (let attempt = 1; attempt < 3; attempt += 1) {
      await outcomes.reached(attempt);
      expect(sqs.calls.filter((call) => call.command === 'DeleteMessage' || call.command === 'ChangeMessageVisibility')).toEqual([]);
      sqs.lapse(queueUrl);
    }
    await sqs.next('DeleteMessage');
    expect(outcomes.kinds).toEqual(['failed', 'failed', 'dead']);
    expect(runs).toBe(3);
    const [letter, ...more] = sqs.queue(deadLetterQueueUrl);
    expect(more).toEqual([]);
    expect(JSON.parse(letter!.Body)).toEqual({ orderId });
    expect(letter!.MessageAttributes['idempotency-message-id']?.StringValue).toBe(orderId);
    expect(letter!.MessageAttributes['idempotency-error']?.StringValue).toContain('cannot be fulfilled');
    expect(sqs.queue(queueUrl)).toEqual([]);
    const rows = (await schema.pool.query('SELECT status, response_status FROM idempotency_store WHERE key = $1', [`fulfilOrder:${orderId}`])).rows;
    expect(rows).toEqual([{ status: 'FAILED', response_status: 500 }]);

    // Sent again: acknowledged (deleted) without running.
    const deleted = sqs.next('DeleteMessage');
    await sqsModule.sendWithId(sqs, queueUrl, JSON.stringify({ orderId }), orderId);
    await deleted;
    stop.abort();
    await loop;
    expect(outcomes.kinds.at(-1)).toBe('duplicate');
    expect(runs).toBe(3);
  });
});
