import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Queue from 'bull';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { redisSkipReason } from '../scaffold/storeContract/services.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
if (skip) console.warn(`skipped: ${skip}`);

const APP_DDL = 'CREATE TABLE receipts (id serial PRIMARY KEY, order_id text NOT NULL, email text NOT NULL)';

/**
 * Issue #19 for legacy Bull: the bull-worker fixture (queue.process('receipt', 2, handler), and a NestJS @Processor
 * with a @Process('receipt') method) after `apply --yes` type-checks and a second apply changes nothing; then, against real Redis and PostgreSQL, a job added again after
 * it completed, and a job whose worker process was killed in the middle of its handler, each take effect once.
 * The kill lands before the handler's own write commits (the app writes through its own pool, not the claim's
 * transaction): what the wrapper owes there is a re-run that is neither refused nor repeated once it completed.
 */
describe.skipIf(skip !== undefined)('apply on the Bull worker fixture (bull queue.process, @nestjs/bull @Process)', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('bull-worker');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wraps the queue.process handler and the @Process() method, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/nest/receipts.processor.ts', 'src/worker.ts']);
    const worker = await readFile(path.join(copy.dir, 'src/worker.ts'), 'utf8');
    expect(worker).toContain("queue.process('receipt', 2, bullProcessor({\n    core: idempotency.core,\n    action: ACTIONS.sendReceipt,\n    handle: async (job) => {");
    const processor = await readFile(path.join(copy.dir, 'src/nest/receipts.processor.ts'), 'utf8');
    expect(processor).toContain('  private readonly sendReceiptOnce = bullProcessor({\n    core: idempotency.core,\n    action: ACTIONS.sendNestReceipt,\n    handle: async (job: Job<ReceiptJob>) => {');
    expect(processor).toContain("  @Process('receipt')\n  async sendReceipt(job: Job<ReceiptJob>) {\n    return this.sendReceiptOnce(job);\n  }");
    expect(await compile(copy.dir)).toBe('');

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/worker.ts'), 'utf8')).toBe(worker);
    expect(await readFile(path.join(copy.dir, 'src/nest/receipts.processor.ts'), 'utf8')).toBe(processor);
  }, 240_000);

  it('runs a job added again after it completed, a job whose worker was killed mid-handler, and a NestJS job added again, once each', async () => {
    schema = await createAppSchema('wt_webhooks_bull', copy.migration, APP_DDL);
    const prefix = `idem-wt-webhooks-${randomUUID().slice(0, 8)}`;
    const queueName = 'receipts';
    const redis = { host: '127.0.0.1', port: Number(process.env['REDIS_PORT'] ?? 6379) };
    // Short locks so the job of a dead worker is noticed in seconds, not Bull's default 30.
    const env = { REDIS_HOST: redis.host, REDIS_PORT: String(redis.port), BULL_PREFIX: prefix, BULL_LOCK_MS: '2000', BULL_STALLED_MS: '1000' };
    const queue = new Queue<{ orderId: string; email: string }>(queueName, { redis, prefix });
    const receipts = async (orderId: string) => (await schema!.pool.query('SELECT count(*)::int AS n FROM receipts WHERE order_id = $1', [orderId])).rows[0].n as number;
    const jobOptions = { attempts: 5, backoff: { type: 'fixed', delay: 500 }, removeOnComplete: true };
    let worker: Queue.Queue | undefined;
    let nest: { close(): Promise<void> } | undefined;
    let pool: { end(): Promise<void> } | undefined;
    const holder = await schema.pool.connect();
    let child: ChildProcess | undefined;
    try {
      // A worker process whose handler is stuck in its INSERT (the test holds the table lock), then killed.
      const app = `idem-wt-webhooks-${randomUUID().slice(0, 8)}`;
      const spawned = spawn(process.execPath, ['dist/src/main.js', queueName], {
        cwd: copy.dir,
        env: { ...process.env, ...env, DATABASE_URL: `${schema.url}&application_name=${app}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = spawned;
      let output = '';
      spawned.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      spawned.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise((resolve) => spawned.once('exit', resolve));
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE receipts IN EXCLUSIVE MODE');
      const killed = await queue.add('receipt', { orderId: 'order-9', email: 'b@example.com' }, { ...jobOptions, jobId: 'receipt-order-9' });
      await waitFor(async () => (await schema!.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [app])).rows[0].n > 0, () => output);
      spawned.kill('SIGKILL');
      await exited;
      // The kernel closed the dead process's sockets, but a backend blocked on a lock only notices when it next talks
      // to its client: end them as the server would, so the stuck INSERT and the open claim roll back.
      await schema.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
      await holder.query('ROLLBACK');

      // The same worker, restarted in this process: it finds the stalled job and runs it.
      Object.assign(process.env, env, { DATABASE_URL: schema.url });
      const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
      ({ db: pool } = await load<{ db: { end(): Promise<void> } }>('db.js'));
      const { startReceiptWorker } = await load<{ startReceiptWorker: (queue: string) => Queue.Queue }>('worker.js');
      worker = startReceiptWorker(queueName);
      // The dead worker's claim rolled back with its connection: the re-run is not refused as busy, it applies the job.
      expect(await killed.finished()).toEqual({ duplicate: false });
      // And that run is recorded: the same job added again is a duplicate.
      const readded = await queue.add('receipt', { orderId: 'order-9', email: 'b@example.com' }, { ...jobOptions, jobId: 'receipt-order-9' });
      expect(await readded.finished()).toEqual({ duplicate: true });
      expect(await receipts('order-9')).toBe(1);

      // Bull forgets a completed job removed from the queue: the same job id added again runs the handler again.
      const data = { orderId: 'order-7', email: 'a@example.com' };
      const once = await queue.add('receipt', data, { ...jobOptions, jobId: 'receipt-order-7' });
      expect(await once.finished()).toEqual({ duplicate: false });
      const rerun = await queue.add('receipt', data, { ...jobOptions, jobId: 'receipt-order-7' });
      expect(await rerun.finished()).toEqual({ duplicate: true });
      expect(await receipts('order-7')).toBe(1);

      // The NestJS @Process() method, wired the same way: a re-added job finds its record.
      const { startNestWorker } = await load<{ startNestWorker: () => Promise<{ close(): Promise<void> }> }>('nest/worker.module.js');
      nest = await startNestWorker();
      const nestQueue = new Queue<{ orderId: string; email: string }>('nest-receipts', { redis, prefix });
      try {
        const nestData = { orderId: 'order-21', email: 'c@example.com' };
        expect(await (await nestQueue.add('receipt', nestData, { ...jobOptions, jobId: 'receipt-order-21' })).finished()).toEqual({ duplicate: false });
        expect(await (await nestQueue.add('receipt', nestData, { ...jobOptions, jobId: 'receipt-order-21' })).finished()).toEqual({ duplicate: true });
        expect(await receipts('order-21')).toBe(1);
      } finally {
        await nestQueue.obliterate({ force: true }).catch(() => undefined);
        await nestQueue.close();
      }
    } finally {
      // A failure while the test holds the table lock must not leave it held: the schema could not be dropped after.
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await nest?.close();
      await worker?.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await pool?.end();
    }
  }, 240_000);
});

/** Polls a condition the test cannot be told about (a backend waiting on a lock), with a generous overall deadline. */
async function waitFor(condition: () => Promise<boolean>, context: () => string, deadlineMs = 120_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`condition not reached; worker output:\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
