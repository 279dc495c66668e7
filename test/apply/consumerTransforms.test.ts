import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const options = (modules: string[]): WireSourceOptions => ({
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', ...modules]),
});
const target = (file: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'sendReceipt', codeName: 'sendReceipt', trigger: 'consumer', file, line, ...extra });

function expectIdempotent(file: string, text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  const again = wireSource(file, text, targets, { ...opts, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
  expect(again.stale).toEqual([]);
}

describe('BullMQ workers', () => {
  const file = 'src/jobs/receipts.ts';
  const source = `import { Worker } from 'bullmq';
import { sendMail } from '../mail.js';

export const worker = new Worker('receipts', async (job) => {
  await sendMail(job.data.email);
}, { connection });
`;

  it('passes the processor as the handle of bullmqProcessor, imported next to the instance and ACTIONS', () => {
    const out = wireSource(file, source, [target(file, 4)], options(['consumers/bullmq']));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { idempotency } from '../idempotency/instance.js';\n");
    expect(out.text).toContain("import { ACTIONS } from '../idempotency/index.js';\n");
    expect(out.text).toContain("import { bullmqProcessor } from '../idempotency/consumers/bullmq.js';\n");
    expect(out.text).toContain(`export const worker = new Worker('receipts', bullmqProcessor({
  core: idempotency.core,
  action: ACTIONS.sendReceipt,
  handle: async (job) => {
    await sendMail(job.data.email);
  },
}), { connection });`);
    expect(out.edits).toHaveLength(1);
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('jobIdFor(ACTIONS.sendReceipt');
    expectIdempotent(file, out.text, [target(file, 4)], options(['consumers/bullmq']));
  });

  it('wraps a named processor so BullMQ\u2019s token never reaches it as the context', () => {
    const named = "import { Worker } from 'bullmq';\nimport { processReceipt } from './process.js';\n\nexport const worker = new Worker('receipts', processReceipt, { connection });\n";
    const out = wireSource(file, named, [target(file, 4)], options(['consumers/bullmq']));
    expect(out.text).toContain('handle: async (message) => {\n    await processReceipt(message);\n  },');
  });

  it('leaves a sandboxed processor file, a processor taking the lock token, and worker_threads alone', () => {
    const sandboxed = "import { Worker } from 'bullmq';\n\nexport const worker = new Worker('receipts', './processor.js', { connection });\n";
    const token = "import { Worker } from 'bullmq';\n\nexport const worker = new Worker('receipts', async (job, token) => job.extendLock(token!, 1000), { connection });\n";
    const threads = "import { Worker } from 'node:worker_threads';\n\nexport const worker = new Worker('./thread.js', { workerData: 1 });\n";
    for (const [text, why] of [[sandboxed, 'sandboxed processor file'], [token, 'more than the message'], [threads, 'does not recognise']] as const) {
      const out = wireSource(file, text, [target(file, 3)], options(['consumers/bullmq']));
      expect(out.text).toBe(text);
      expect(out.manual.map((m) => m.reason).join('\n')).toContain(why);
    }
  });

  it('says which generate step is missing when the scaffold has no BullMQ adapter', () => {
    const out = wireSource(file, source, [target(file, 4)], options([]));
    expect(out.text).toBe(source);
    expect(out.manual[0]?.reason).toContain('the scaffold has no consumers/bullmq.ts');
  });

  it('refuses a file whose worker moved since inspection', () => {
    const out = wireSource(file, source, [target(file, 1)], options(['consumers/bullmq']));
    expect(out.stale[0]).toContain('changed since inspection');
  });
});

describe('kafkajs, amqplib and JetStream consumers', () => {
  const file = 'src/consumer.ts';
  it('wires kafkajs eachMessage through kafkaEachMessage and turns auto-commit off', () => {
    const source = `import { Kafka } from 'kafkajs';

const consumer = new Kafka({ brokers: ['localhost:9092'] }).consumer({ groupId: 'g' });
await consumer.run({
  eachMessage: async ({ message }) => {
    await apply(message.value);
  },
});
`;
    const out = wireSource(file, source, [target(file, 4)], options(['consumers/kafka']));
    expect(out.text).toContain("import { kafkaEachMessage } from './idempotency/consumers/kafka.js';");
    expect(out.text).toContain(`await consumer.run({
  autoCommit: false,
  eachMessage: kafkaEachMessage(consumer, {
    core: idempotency.core,
    action: ACTIONS.sendReceipt,
    handle: async ({ message }) => {
      await apply(message.value);
    },
  }),
});`);
    expectIdempotent(file, out.text, [target(file, 4)], options(['consumers/kafka']));
  });

  it('lists amqplib and JetStream handlers as manual: they acknowledge messages themselves', () => {
    const amqp = "import amqp from 'amqplib';\n\nawait channel.consume('orders', async (msg) => {\n  channel.ack(msg!);\n});\n";
    const nats = "import { connect } from 'nats';\n\nconst messages = await consumer.consume();\n";
    for (const [text, line] of [[amqp, 3], [nats, 3]] as const) {
      const out = wireSource(file, text, [target(file, line)], options(['consumers/amqplib', 'consumers/nats']));
      expect(out.text).toBe(text);
      expect(out.manual[0]?.reason).toContain('acknowledges messages itself');
    }
  });
});
