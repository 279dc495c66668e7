import { describe, expect, it } from 'vitest';
import { consumersAndCrons } from '../../src/findings/localInspection.js';
import { inspectProject } from '../../src/inspect/index.js';
import type { ConsumerFinding, CronFinding } from '../../src/inspect/types.js';
import { tempProjectSync } from '../helpers/tempProject.js';
import { contextFor } from '../findings/ruleTester.js';

/**
 * A project's own wrapper around its broker client, the shape of Vegetam/microservices-ddd-kafka@afdd111: a NestJS
 * KafkaService whose subscribe(topic, groupId, handler) runs `await handler(parsed)` inside kafkajs's eachMessage,
 * and services that subscribe through it. Each subscription is a consumer; the wrapper's own eachMessage is not.
 */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ dependencies: { kafkajs: '^2.2.4', amqplib: '^0.10.0', '@nestjs/common': '^10.0.0' } }),
  'src/kafka/kafka.service.ts': `import { Injectable } from '@nestjs/common';
import { Kafka, Consumer } from 'kafkajs';

@Injectable()
export class KafkaService {
  private consumer?: Consumer;
  private readonly kafka = new Kafka({ brokers: ['localhost:9092'] });

  async subscribe(topic: string, groupId: string, handler: (payload: Record<string, unknown>) => Promise<void>): Promise<void> {
    this.consumer = this.kafka.consumer({ groupId });
    await this.consumer.subscribe({ topic, fromBeginning: false });
    await this.consumer.run({
      eachMessage: async ({ message }) => {
        const parsed = JSON.parse(message.value?.toString('utf8') ?? '{}') as Record<string, unknown>;
        await handler(parsed);
      },
    });
  }
}
`,
  'src/kafka/index.ts': `export { KafkaService } from './kafka.service';\n`,
  'src/payments/event-consumer.ts': `import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { KafkaService as Bus } from '../kafka';

const CANCELLED = 'order.cancelled';

@Injectable()
export class EventConsumer implements OnApplicationBootstrap {
  constructor(private readonly kafka: Bus) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.kafka.subscribe('order.created', 'payments-created', async (p) => {
      await charge(p.orderId as string);
    });
    await this.kafka.subscribe(CANCELLED, 'payments-cancelled', async (event) => {
      if (await seen(event.id as string)) return;
      await refund(event.orderId as string);
    });
  }
}
declare function charge(id: string): Promise<void>;
declare function refund(id: string): Promise<void>;
declare function seen(id: string): Promise<boolean>;
`,
  'src/other/unrelated.ts': `export function subscribe(name: string, fn: () => void) { return [name, fn]; }
subscribe('not-a-topic', () => undefined);
`,
  'src/mail/queue.js': `const amqp = require('amqplib');
let channel;
async function onQueue(queue, handler) {
  channel = channel || (await (await amqp.connect('amqp://localhost')).createChannel());
  await channel.consume(queue, async (msg) => {
    await handler(JSON.parse(msg.content.toString()));
    channel.ack(msg);
  });
}
module.exports = { onQueue };
onQueue('emails', sendEmail);
async function sendEmail(body) { return body; }
`,
  'src/outbox.ts': `export class OutboxWorker {
  start() {
    setInterval(() => this.processOutbox().catch((err) => console.error(err)), 500);
  }
  private async processOutbox(): Promise<void> {}
}
new OutboxWorker().start();
`,
};

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-wrappers-');

const consumers = (findings: readonly { kind: string }[]) =>
  (findings.filter((f) => f.kind === 'consumer') as ConsumerFinding[]).map((f) => ({ file: f.file, line: f.line, queue: f.queue, dedupes: f.dedupes, via: f.via?.name }));

const expected = [
  { file: 'src/mail/queue.js', line: 11, queue: 'emails', dedupes: false, via: 'onQueue' },
  { file: 'src/payments/event-consumer.ts', line: 11, queue: 'order.created', dedupes: false, via: 'KafkaService.subscribe' },
  { file: 'src/payments/event-consumer.ts', line: 14, queue: 'order.cancelled', dedupes: true, via: 'KafkaService.subscribe' },
];

describe("consumers registered through the project's own wrapper", () => {
  it('inspect reports one consumer per call of the wrapper, with its topic, and none inside the wrapper', async () => {
    const inspection = await inspectProject(project(FILES));
    const found = consumers(inspection.findings).sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
    expect(found).toEqual(expected);
    const wrapped = inspection.findings.find((f) => f.kind === 'consumer' && f.file === 'src/payments/event-consumer.ts') as ConsumerFinding;
    expect(wrapped.via).toEqual({ name: 'KafkaService.subscribe', file: 'src/kafka/kafka.service.ts', line: 12 });
  });

  it('audit finds the same consumers from its own parses', () => {
    const ctx = contextFor({ name: 'wrappers', files: FILES, dependencies: { kafkajs: '^2.2.4', amqplib: '^0.10.0' } });
    const found = consumers(consumersAndCrons(ctx.sources, new Map()).findings).sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
    expect(found).toEqual(expected);
  });

  it('a wrapper without callers keeps its own finding', async () => {
    const { 'src/payments/event-consumer.ts': _callers, ...rest } = FILES;
    const inspection = await inspectProject(project(rest));
    expect(consumers(inspection.findings)).toContainEqual({ file: 'src/kafka/kafka.service.ts', line: 12, queue: '?', dedupes: false, via: undefined });
  });

  it("in the wrapper's own file, only this.subscribe(…) is a call of it, not the client's consumer.subscribe({ topic })", async () => {
    const service = FILES['src/kafka/kafka.service.ts']!.replace(
      '  async subscribe(',
      "  async start(): Promise<void> {\n    await this.subscribe('audit.log', 'audit', async (entry) => record(entry));\n  }\n\n  async subscribe(",
    ) + 'declare function record(entry: unknown): Promise<void>;\n';
    const inspection = await inspectProject(project({ 'package.json': FILES['package.json']!, 'src/kafka/kafka.service.ts': service }));
    expect(consumers(inspection.findings)).toEqual([{ file: 'src/kafka/kafka.service.ts', line: 10, queue: 'audit.log', dedupes: false, via: 'KafkaService.subscribe' }]);
  });

  it("a job run from a promise chain is named after the call, not its .catch", async () => {
    const inspection = await inspectProject(project(FILES));
    const cron = inspection.findings.find((f) => f.kind === 'cron') as CronFinding;
    expect(cron.name).toBe('processOutbox');
  });

  // rodrigobranas/cccat16_8@5101099 (payment/): a port, its RabbitMQ adapter, and a controller holding the port.
  it('a caller holding the adapter through the interface it implements (a port, the default export) is a consumer of it', async () => {
    const port = `import amqp from 'amqplib';

export default interface Queue {
  consume(queueName: string, callback: Function): Promise<void>;
}

export class RabbitMQAdapter implements Queue {
  connection: any;
  async consume(queueName: string, callback: Function): Promise<void> {
    const channel = await this.connection.createChannel();
    channel.consume(queueName, async (msg: any) => {
      await callback(JSON.parse(msg.content.toString()));
      channel.ack(msg);
    });
  }
}
`;
    const controller = `import Queue from './Queue';

export default class QueueController {
  constructor(queue: Queue, processPayment: { execute(input: unknown): Promise<unknown> }) {
    queue.consume('rideCompleted.processPayment', async (input: any) => {
      await processPayment.execute(input);
    });
  }
}
`;
    const inspection = await inspectProject(project({ 'package.json': JSON.stringify({ dependencies: { amqplib: '^0.10.4' } }), 'src/queue/Queue.ts': port, 'src/queue/QueueController.ts': controller }));
    expect(consumers(inspection.findings)).toEqual([{ file: 'src/queue/QueueController.ts', line: 5, queue: 'rideCompleted.processPayment', dedupes: false, via: 'RabbitMQAdapter.consume' }]);
  });
});
