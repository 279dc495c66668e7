import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { redisSkipReason } from '../scaffold/storeContract/services.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
if (skip) console.warn(`skipped: ${skip}`);

const APP_DDL = `
CREATE TABLE cancellations (id serial PRIMARY KEY, payment_id int NOT NULL);
CREATE TABLE reports (id serial PRIMARY KEY, kind text NOT NULL)`;

/**
 * Issue #19 for NestJS queues and schedules, in the shape of hoangnh228/nestjs-super@8e6b270: a @nestjs/bullmq
 * WorkerHost whose process() switches on the job name, and an @nestjs/schedule @Cron method. After `apply --yes` the
 * app type-checks and a second apply changes nothing; then, in a Nest application context against real Redis and
 * PostgreSQL, a job added again after it completed, and a cron slot fired by three instances at once, take effect once.
 */
describe.skipIf(skip !== undefined)('apply on the NestJS BullMQ worker fixture (WorkerHost process(), @Cron)', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('nest-bullmq-worker');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wraps process() and the @Cron method, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/cleanup.cronjob.ts', 'src/idempotency/instance.ts', 'src/payment.processor.ts']);
    const processor = await readFile(path.join(copy.dir, 'src/payment.processor.ts'), 'utf8');
    expect(processor).toContain('  private readonly processOnce = bullmqProcessor({\n    core: idempotency.core,\n    action: ACTIONS.cancelPayment,\n    handle: async (job: Job<PaymentJob>) => {');
    expect(processor).toContain('  async process(job: Job<PaymentJob>): Promise<any> {\n    return this.processOnce(job);\n  }');
    const cron = await readFile(path.join(copy.dir, 'src/cleanup.cronjob.ts'), 'utf8');
    expect(cron).toContain("    await cronGuard.runInterval(ACTIONS.nightlyCleanup, 'nightlyCleanup', 86_400_000, async () => {");
    expect(await compile(copy.dir)).toBe('');
    // audit (in CI after apply) sees the wiring: neither the processor nor the schedule is reported unprotected.
    const rules = (await auditProject(copy.dir)).findings.map((f) => f.ruleId);
    expect(rules.filter((id) => id === 'consumer-without-dedupe' || id === 'cron-without-overlap-guard')).toEqual([]);

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/payment.processor.ts'), 'utf8')).toBe(processor);
    expect(await readFile(path.join(copy.dir, 'src/cleanup.cronjob.ts'), 'utf8')).toBe(cron);
  }, 240_000);

  it('runs a job added again after it completed, and one cron slot fired by three instances, once each', async () => {
    schema = await createAppSchema('wt_nest_bullmq', copy.migration, APP_DDL);
    const prefix = `idem-nest-bullmq-${randomUUID().slice(0, 8)}`;
    const connection = { host: '127.0.0.1', port: Number(process.env['REDIS_PORT'] ?? 6379) };
    Object.assign(process.env, { DATABASE_URL: schema.url, REDIS_HOST: connection.host, REDIS_PORT: String(connection.port), BULL_PREFIX: prefix });
    const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
    const { db } = await load<{ db: { end(): Promise<void> } }>('db.js');
    const { startNestWorker } = await load<{ startNestWorker: () => Promise<{ get<T>(type: new (...args: never[]) => T): T; close(): Promise<void> }> }>('worker.module.js');
    const { CleanupCronjob } = await load<{ CleanupCronjob: new () => { handleCron(): Promise<void> } }>('cleanup.cronjob.js');
    const count = async (table: string) => (await schema!.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    const queue = new Queue('nest-payments', { connection, prefix });
    const events = new QueueEvents('nest-payments', { connection, prefix });
    await events.waitUntilReady();
    const nest = await startNestWorker();
    try {
      // BullMQ forgets a completed job removed from the queue: the same job id added again runs process() again.
      const options = { jobId: 'cancel-payment-7', attempts: 5, removeOnComplete: true };
      const once = await queue.add('cancel-payment', { paymentId: 7 }, options);
      expect(await once.waitUntilFinished(events, 60_000)).toEqual({ duplicate: false });
      const rerun = await queue.add('cancel-payment', { paymentId: 7 }, options);
      expect(await rerun.waitUntilFinished(events, 60_000)).toEqual({ duplicate: true });
      expect(await count('cancellations')).toBe(1);

      // Every instance's scheduler fires tonight's slot: one clean-up, and a later fire of that slot finds it done.
      const instances = [nest.get(CleanupCronjob), new CleanupCronjob(), new CleanupCronjob()];
      await Promise.all(instances.map((instance) => instance.handleCron()));
      await instances[0]!.handleCron();
      expect(await count('reports')).toBe(1);
    } finally {
      await nest.close();
      await events.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await db.end();
    }
  }, 240_000);
});
