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

  it("says when the handler's catch only logs: a failed message then counts as handled (Bun-Hono-KafkaJS-Boilerplate@768db55)", () => {
    const handler = (rethrow: string) => `import { Kafka } from 'kafkajs';

const consumer = new Kafka({ brokers: ['localhost:9092'] }).consumer({ groupId: 'g' });
await consumer.run({
  eachMessage: async ({ topic, message }) => {
    try {
      await save(JSON.parse(message.value!.toString()));
    } catch (error) {
      logger.error('could not log activity', { error, topic });${rethrow}
    }
  },
});
`;
    const swallowed = wireSource(file, handler(''), [target(file, 4)], options(['consumers/kafka']));
    expect(swallowed.manual).toEqual([expect.objectContaining({ line: 8, reason: expect.stringContaining("the handler's catch (line 8) logs a failure and returns") })]);
    const rethrown = wireSource(file, handler('\n      throw error;'), [target(file, 4)], options(['consumers/kafka']));
    expect(rethrown.manual).toEqual([]);
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

describe('legacy Bull queue.process handlers', () => {
  const file = 'src/jobs/receipts.ts';
  const source = `import Queue from 'bull';
import { sendMail } from '../mail.js';

const receipts = new Queue<{ email: string }>('receipts');

receipts.process('receipt', 4, async (job) => {
  await sendMail(job.data.email);
});
`;

  it('passes the handler as the handle of bullProcessor, whatever name and concurrency come before it', () => {
    const out = wireSource(file, source, [target(file, 6)], options(['consumers/bull']));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { bullProcessor } from '../idempotency/consumers/bull.js';\n");
    expect(out.text).toContain(`receipts.process('receipt', 4, bullProcessor({
  core: idempotency.core,
  action: ACTIONS.sendReceipt,
  handle: async (job) => {
    await sendMail(job.data.email);
  },
}));`);
    expect(out.edits).toHaveLength(1);
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('jobIdFor(ACTIONS.sendReceipt, { …business identity }) from consumers/bull.ts');
    expectIdempotent(file, out.text, [target(file, 6)], options(['consumers/bull']));
  });

  it('wraps a named handler passed alone', () => {
    const named = "import Queue from 'bull';\nimport { processReceipt } from './process.js';\n\nconst receipts = new Queue('receipts');\nreceipts.process(processReceipt);\n";
    const out = wireSource(file, named, [target(file, 5)], options(['consumers/bull']));
    expect(out.text).toContain('receipts.process(bullProcessor({\n  core: idempotency.core,\n  action: ACTIONS.sendReceipt,\n  handle: async (message) => {\n    await processReceipt(message);\n  },\n}));');
  });

  it('leaves a done-callback handler, a sandboxed processor file and a BullMQ file alone', () => {
    const done = "import Queue from 'bull';\n\nconst receipts = new Queue('receipts');\nreceipts.process((job, done) => done());\n";
    const sandboxed = "import Queue from 'bull';\n\nconst receipts = new Queue('receipts');\nreceipts.process(2, './processor.js');\n";
    const bullmq = "import { Queue } from 'bullmq';\n\nconst receipts = new Queue('receipts');\nreceipts.process(async (job) => job);\n";
    for (const [text, why] of [[done, 'done callback'], [sandboxed, 'wrap the function exported there with bullProcessor()'], [bullmq, 'does not recognise']] as const) {
      const out = wireSource(file, text, [target(file, 4)], options(['consumers/bull']));
      expect(out.text).toBe(text);
      expect(out.manual.map((m) => m.reason).join('\n')).toContain(why);
    }
  });

  it('says which generate step is missing when the scaffold has no Bull adapter', () => {
    const out = wireSource(file, source, [target(file, 6)], options(['consumers/bullmq']));
    expect(out.text).toBe(source);
    expect(out.manual[0]?.reason).toContain('the scaffold has no consumers/bull.ts');
  });
});

describe('NestJS @nestjs/bull @Process() methods', () => {
  const file = 'src/receipts.processor.ts';
  const source = `import { Process, Processor } from '@nestjs/bull';
import type { Job } from 'bull';
import { MailService } from './mail.service.js';

@Processor('receipts')
export class ReceiptsProcessor {
  constructor(private readonly mail: MailService) {}

  @Process('receipt')
  async sendReceipt(job: Job<{ email: string }>) {
    await this.mail.send(job.data.email);
  }
}
`;

  it('moves the method body into a bullProcessor the class builds once, and keeps the decorated method', () => {
    const out = wireSource(file, source, [target(file, 9)], options(['consumers/bull']));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { bullProcessor } from './idempotency/consumers/bull.js';\n");
    expect(out.text).toContain(`  constructor(private readonly mail: MailService) {}

  private readonly sendReceiptOnce = bullProcessor({
    core: idempotency.core,
    action: ACTIONS.sendReceipt,
    handle: async (job: Job<{ email: string }>) => {
      await this.mail.send(job.data.email);
    },
  });

  @Process('receipt')
  async sendReceipt(job: Job<{ email: string }>) {
    return this.sendReceiptOnce(job);
  }
}`);
    expect(out.edits).toHaveLength(1);
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('from consumers/bull.ts');
    expectIdempotent(file, out.text, [target(file, 9)], options(['consumers/bull']));
  });

  it('wires two @Process() methods of one class, and a second apply finds both wired though their lines moved', () => {
    const two = source.replace('  }\n}\n', `  }

  @Process('refund')
  async sendRefund(job: Job<{ email: string }>) {
    await this.mail.send(job.data.email);
  }
}
`);
    const targets = [target(file, 9), { ...target(file, 14), action: 'sendRefund', codeName: 'sendRefund' }];
    const out = wireSource(file, two, targets, options(['consumers/bull']));
    expect(out.edits).toHaveLength(2);
    expect(out.text).toContain('private readonly sendRefundOnce = bullProcessor({');
    expectIdempotent(file, out.text, targets, options(['consumers/bull']));
  });

  it('awaits the wrapper instead of returning it when the method declares its own return type', () => {
    const typed = source.replace('async sendReceipt(job: Job<{ email: string }>) {', 'async sendReceipt(job: Job<{ email: string }>): Promise<void> {');
    const out = wireSource(file, typed, [target(file, 9)], options(['consumers/bull']));
    expect(out.text).toContain('): Promise<void> {\n    await this.sendReceiptOnce(job);\n  }');
  });

  it('leaves a method that takes done, one that is not async, and a BullMQ processor without process() alone', () => {
    const done = source.replace('async sendReceipt(job: Job<{ email: string }>)', 'async sendReceipt(job: Job, done: () => void)');
    const sync = source.replace('async sendReceipt', 'sendReceipt');
    const bullmq = source.replace("'@nestjs/bull'", "'@nestjs/bullmq'");
    for (const [text, line, why] of [[done, 9, 'does not take the job alone'], [sync, 9, 'is not async'], [bullmq, 5, 'has no process() method']] as const) {
      const out = wireSource(file, text, [target(file, line)], options(['consumers/bull', 'consumers/bullmq']));
      expect(out.text).toBe(text);
      expect(out.manual.map((m) => m.reason).join('\n')).toContain(why);
    }
  });
});

// hoangnh228/nestjs-super@8e6b270: a WorkerHost whose process() switches on the job name.
describe('NestJS @nestjs/bullmq WorkerHost processors', () => {
  const file = 'src/queues/payment.consumer.ts';
  const source = `import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { PaymentRepository } from './payment.repo.js';

@Processor('payment')
export class PaymentConsumer extends WorkerHost {
  constructor(private readonly payments: PaymentRepository) {
    super();
  }

  async process(job: Job<{ paymentId: number }>, token?: string): Promise<any> {
    if (job.name === 'cancel-payment') await this.payments.cancel(job.data.paymentId);
  }
}
`;

  it('moves process() into a bullmqProcessor the class builds once, keeping the signature Nest calls', () => {
    const out = wireSource(file, source, [target(file, 5)], options(['consumers/bullmq']));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { bullmqProcessor } from '../idempotency/consumers/bullmq.js';\n");
    expect(out.text).toContain(`  private readonly processOnce = bullmqProcessor({
    core: idempotency.core,
    action: ACTIONS.sendReceipt,
    handle: async (job: Job<{ paymentId: number }>) => {
      if (job.name === 'cancel-payment') await this.payments.cancel(job.data.paymentId);
    },
  });

  async process(job: Job<{ paymentId: number }>, token?: string): Promise<any> {
    return this.processOnce(job);
  }`);
    expect(out.edits.map((e) => e.summary).join('\n')).toContain('runs PaymentConsumer.process() (line 5) through bullmqProcessor');
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('jobIdFor(ACTIONS.sendReceipt');
    expectIdempotent(file, out.text, [target(file, 5)], options(['consumers/bullmq']));
  });

  it('leaves a process() that reads the lock token, and one without the BullMQ adapter in the scaffold', () => {
    const reads = source.replace('await this.payments.cancel(job.data.paymentId);', 'await this.payments.cancel(job.data.paymentId, token);');
    expect(wireSource(file, reads, [target(file, 5)], options(['consumers/bullmq'])).manual[0]?.reason).toContain('a lock token it reads');
    expect(wireSource(file, source, [target(file, 5)], options([])).manual[0]?.reason).toContain('the scaffold has no consumers/bullmq.ts');
  });
});

describe("a consumer registered through the project's own wrapper", () => {
  it('is left manual, naming the wrapper call and saying the handler may get only the payload', () => {
    const file = 'src/payments/event-consumer.ts';
    const text = `export class EventConsumer {
  constructor(private readonly kafka: KafkaService) {}
  async start(): Promise<void> {
    await this.kafka.subscribe('order.created', 'payments', async (p) => {
      await charge(p.orderId as string);
    });
  }
}
declare class KafkaService { subscribe(topic: string, group: string, handler: (p: Record<string, unknown>) => Promise<void>): Promise<void> }
declare function charge(id: string): Promise<void>;
`;
    const out = wireSource(file, text, [target(file, 4)], options(['consumers/kafka']));
    expect(out.text).toBe(text);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining("registered through `this.kafka.subscribe(…)`, the project's own wrapper")]);
    expect(out.manual[0]!.reason).toContain('a business key from it');
  });

  it("a port's consume(queue, handler) on a typed parameter is the project's wrapper, not amqplib's channel (cccat16_8@5101099)", () => {
    const file = 'src/infra/queue/QueueController.ts';
    const text = `import Queue from './Queue';

export default class QueueController {
  constructor(queue: Queue, processPayment: { execute(input: unknown): Promise<unknown> }) {
    queue.consume('rideCompleted.processPayment', async (input: any) => {
      await processPayment.execute(input);
    });
  }
}
`;
    const out = wireSource(file, text, [target(file, 5)], options(['consumers/amqplib']));
    expect(out.text).toBe(text);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining("registered through `queue.consume(…)`, the project's own wrapper")]);
  });
});
