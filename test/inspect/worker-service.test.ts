import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** A worker-only service: BullMQ, kafkajs, amqplib, sqs-consumer, NATS, an SQS Lambda, cron, node-schedule, setInterval, and the dedupe already in place. */
describe('inspect worker-service', () => {
  const root = path.resolve('fixtures/projects/worker-service');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: [],
      databases: ['dynamodb', 'redis'],
      orms: ['ioredis'],
      brokers: ['bullmq', 'kafka', 'nats', 'rabbitmq', 'sqs'],
      testFramework: 'node-test',
      packageManager: 'npm',
      payments: [],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'consumer',
        id: 'bullmq emails',
        file: 'src/consumers/emails.ts',
        line: 9,
        broker: 'bullmq',
        queue: 'emails',
        dedupes: true,
        messageId: 'job.id',
        dedupeEvidence: {
          file: 'src/consumers/emails.ts',
          line: 12,
          detail: 'atomic claim keyed by the id: const fresh = await connection.set(`email:${job.id}`, \'1\', \'EX\', 86400, \'NX\');',
        },
      },
      {
        kind: 'existing-idempotency',
        id: 'job-id-dedupe job welcome added with a deterministic jobId',
        file: 'src/consumers/emails.ts',
        line: 20,
        mechanism: 'job-id-dedupe',
        detail: 'job welcome added with a deterministic jobId',
      },
      {
        kind: 'cron',
        id: 'bullmq digest',
        file: 'src/consumers/emails.ts',
        line: 21,
        scheduler: 'bullmq',
        schedule: '0 8 * * *',
        name: 'digest',
      },
      {
        kind: 'consumer',
        id: 'rabbitmq invoices.generate',
        file: 'src/consumers/invoices.ts',
        line: 7,
        broker: 'rabbitmq',
        queue: 'invoices.generate',
        dedupes: false,
      },
      {
        kind: 'consumer',
        id: 'kafka payments.settled,payments.refunded',
        file: 'src/consumers/ledger.ts',
        line: 9,
        broker: 'kafka',
        queue: 'payments.settled,payments.refunded',
        dedupes: false,
      },
      {
        kind: 'consumer',
        id: 'sqs shipments',
        file: 'src/consumers/shipments.ts',
        line: 4,
        broker: 'sqs',
        queue: 'shipments',
        dedupes: false,
      },
      {
        kind: 'consumer',
        id: 'nats inventory.adjusted',
        file: 'src/consumers/shipments.ts',
        line: 14,
        broker: 'nats',
        queue: 'inventory.adjusted',
        dedupes: false,
      },
      {
        kind: 'consumer',
        id: 'sqs ?',
        file: 'src/lambda/refunds.ts',
        line: 6,
        broker: 'sqs',
        dedupes: true,
        messageId: 'record.messageId',
        dedupeEvidence: {
          file: 'src/lambda/refunds.ts',
          line: 11,
          detail: 'atomic claim keyed by the id: ConditionExpression: \'attribute_not_exists(id)\',',
        },
      },
      {
        kind: 'existing-idempotency',
        id: 'conditional-put DynamoDB put with attribute_not_exists',
        file: 'src/lambda/refunds.ts',
        line: 8,
        mechanism: 'conditional-put',
        detail: 'DynamoDB put with attribute_not_exists',
      },
      {
        kind: 'cron',
        id: 'cron settleAccounts',
        file: 'src/schedules.ts',
        line: 4,
        scheduler: 'cron',
        schedule: '0 2 * * *',
        name: 'settleAccounts',
      },
      {
        kind: 'cron',
        id: 'node-schedule close-books',
        file: 'src/schedules.ts',
        line: 6,
        scheduler: 'node-schedule',
        schedule: '59 23 * * *',
        name: 'close-books',
      },
      {
        kind: 'cron',
        id: 'setInterval flushOutbox',
        file: 'src/schedules.ts',
        line: 8,
        scheduler: 'setInterval',
        schedule: 'every 60000ms',
        name: 'flushOutbox',
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
