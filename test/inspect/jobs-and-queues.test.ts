import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Decorated processors, graphile-worker tasks, Inngest functions, a Redis-list loop, kafkajs eachBatch and every scheduler form. */
describe('inspect jobs-and-queues', () => {
  const root = path.resolve('fixtures/projects/jobs-and-queues');

  it('reports the stack: Supabase is PostgreSQL, tap is the runner', async () => {
    const { stack } = await inspectProject(root);
    expect(stack.databases).toEqual(['postgres', 'redis']);
    expect(stack.brokers).toEqual(['bull', 'bullmq', 'graphile-worker', 'inngest', 'kafka']);
    expect(stack.testFramework).toBe('tap');
  });

  it('finds each consumer with its job and message identity, and dedupe only with evidence', async () => {
    const { findings } = await inspectProject(root);
    const consumers = findings.flatMap((f) => (f.kind === 'consumer' ? [f] : []));
    expect(consumers.map((c) => [`${c.file}:${c.line}`, c.id, c.messageId ?? '-', c.dedupeEvidence ? `${c.dedupeEvidence.file}:${c.dedupeEvidence.line}` : c.dedupes])).toEqual([
      ['src/emailProcessor.ts:6', 'bull mail welcome', '-', false],
      ['src/emailProcessor.ts:11', 'bull mail receipt', '-', false],
      ['src/inngest.ts:5', 'inngest shop/order.paid fulfil-order', '-', false],
      ['src/kafka.ts:8', 'kafka invoices', 'message.key', false],
      ['src/ledgerProcessor.ts:7', 'bullmq ledger', 'job.id', 'src/ledgerProcessor.ts:10'],
      ['src/redisQueue.ts:7', 'redis-list refunds:pending', 'message.id', 'src/redisQueue.ts:10'],
      ['src/tasks/expire_holds.ts:3', 'graphile-worker expire_holds', '-', false],
      ['src/worker.ts:8', 'graphile-worker chargeRenewal', '-', false],
      ['src/worker.ts:9', 'graphile-worker sendInvoice', '-', false],
    ]);
  });

  it('finds every scheduler form and skips the look-alike', async () => {
    const { findings } = await inspectProject(root);
    const crons = findings.flatMap((f) => (f.kind === 'cron' ? [f] : []));
    expect(crons.map((c) => [`${c.file}:${c.line}`, c.scheduler, c.name, c.schedule])).toEqual([
      ['src/inngest.ts:13', 'inngest', 'nightly-payouts', '0 2 * * *'],
      ['src/schedules.ts:16', 'node-schedule', 'settle-daily', 'RecurrenceRule hour=3 minute=30'],
      ['src/schedules.ts:18', 'node-schedule', 'remindUnpaid', '0 9 * * 1'],
      ['src/schedules.ts:20', 'cron', 'syncRates', '0 */6 * * *'],
      ['vercel.json:3', 'vercel', '/api/cron/expire-holds', '*/15 * * * *'],
    ]);
  });
});

describe('jobs whose names are computed', () => {
  it('are shown by the expression that names them, not a question mark', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-computed-jobs-'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'jobs', dependencies: { bullmq: '5.0.0' } }));
    writeFileSync(
      path.join(dir, 'jobs.ts'),
      [
        "import { Queue } from 'bullmq';",
        "const queue = new Queue('jobs');",
        'export function define(definition: { id: string; cron: string }) {',
        '  void queue.upsertJobScheduler(definition.id, { pattern: definition.cron }, { name: definition.id });',
        '}',
        'export async function trigger(job: { id: string }, options: { id: string }) {',
        '  await queue.add(job.id, {}, { jobId: options.id });',
        '}',
        '',
      ].join('\n'),
    );
    const { findings } = await inspectProject(dir);
    expect(findings.filter((f) => f.kind === 'cron').map((f) => f.id)).toEqual(['bullmq {definition.id}']);
    expect(findings.filter((f) => f.kind === 'existing-idempotency').map((f) => (f.kind === 'existing-idempotency' ? f.detail : ''))).toEqual(['job {job.id} added with a deterministic jobId']);
  });
});
