import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue, QueueEvents, type Worker } from 'bullmq';
import type { Express } from 'express';
import type { Pool } from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { redisSkipReason } from '../scaffold/storeContract/services.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, type FixtureCopy } from './fixtureApp.js';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
if (skip) console.warn(`skipped: ${skip}`);

const APP_DDL = `
CREATE TABLE receipts (id serial PRIMARY KEY, order_id text NOT NULL, email text NOT NULL);
CREATE TABLE reports (id serial PRIMARY KEY, kind text NOT NULL);
CREATE TABLE payments (id serial PRIMARY KEY, intent text NOT NULL)`;

/**
 * Issue #19 for triggers: the worker fixture (a BullMQ worker, a node-cron job and a Stripe webhook that verifies its
 * own signature) after `apply --yes` type-checks, keeps its own test green, and a second apply changes nothing; then,
 * against real Redis and PostgreSQL, a job BullMQ runs again, a cron slot fired twice and a webhook event delivered
 * 50 times at once each take effect once.
 */
describe.skipIf(skip !== undefined)('apply on the worker fixture (BullMQ, node-cron, Stripe webhook)', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('worker');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wraps the worker, the cron job and the webhook handling, type-checks, keeps the app test green, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/cron.ts', 'src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', 'src/webhook.ts', 'src/worker.ts']);
    const worker = await readFile(path.join(copy.dir, 'src/worker.ts'), 'utf8');
    expect(worker).toContain('bullmqProcessor({\n      core: idempotency.core,\n      action: ACTIONS.sendReceipt,\n      handle: async (job) => {');
    const cron = await readFile(path.join(copy.dir, 'src/cron.ts'), 'utf8');
    expect(cron).toContain("cron.schedule('0 3 * * *', nodeCronTask(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 86_400_000, async () => {");
    const webhook = await readFile(path.join(copy.dir, 'src/webhook.ts'), 'utf8');
    // The signature check is untouched and still comes first.
    expect(webhook.indexOf('stripe.webhooks.constructEvent(')).toBeLessThan(webhook.indexOf("onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {"));
    expect(await compile(copy.dir)).toBe('');
    // audit (in CI after apply) sees the wiring: neither the worker nor the cron job is reported unprotected.
    const rules = (await auditProject(copy.dir)).findings.map((f) => f.ruleId);
    expect(rules.filter((id) => id === 'consumer-without-dedupe' || id === 'cron-without-overlap-guard')).toEqual([]);
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await readFile(path.join(copy.dir, 'src/worker.ts'), 'utf8')).toBe(worker);
  });

  it('runs a job BullMQ runs again, a cron slot fired twice, and a webhook event delivered 50 times at once, each once', async () => {
    schema = await createAppSchema('worker', copy.migration, APP_DDL);
    const prefix = `idem-apply-${randomUUID().slice(0, 8)}`;
    Object.assign(process.env, { DATABASE_URL: schema.url, REDIS_HOST: '127.0.0.1', REDIS_PORT: process.env['REDIS_PORT'] ?? '6379', BULL_PREFIX: prefix });
    const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
    const { startReceiptWorker } = await load<{ startReceiptWorker: (queue: string) => Worker }>('worker.js');
    const { scheduleNightlyReport } = await load<{ scheduleNightlyReport: () => { execute(): Promise<unknown>; destroy(): void | Promise<void> } }>('cron.js');
    const { createWebhookApp } = await load<{ createWebhookApp: (secret: string) => Express }>('webhook.js');
    const { db } = await load<{ db: Pool }>('db.js');
    const count = async (table: string) => (await schema!.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

    const connection = { host: '127.0.0.1', port: Number(process.env['REDIS_PORT']) };
    const queueName = 'receipts';
    const queue = new Queue(queueName, { connection, prefix });
    const events = new QueueEvents(queueName, { connection, prefix });
    await events.waitUntilReady();
    const worker = startReceiptWorker(queueName);
    const task = scheduleNightlyReport();
    const server = createWebhookApp('whsec_fixture').listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      // BullMQ forgets a completed job removed from the queue: the same job id added again runs the processor again.
      const data = { orderId: 'order-7', email: 'a@example.com' };
      const once = await queue.add('receipt', data, { jobId: 'receipt-order-7', attempts: 5, removeOnComplete: true });
      expect(await once.waitUntilFinished(events, 60_000)).toEqual({ duplicate: false });
      const rerun = await queue.add('receipt', data, { jobId: 'receipt-order-7', attempts: 5, removeOnComplete: true });
      expect(await rerun.waitUntilFinished(events, 60_000)).toEqual({ duplicate: true });
      expect(await count('receipts')).toBe(1);

      // Every instance's scheduler fires the same nightly slot: one report.
      await Promise.all([task.execute(), task.execute(), task.execute()]);
      await task.execute();
      expect(await count('reports')).toBe(1);

      // Stripe resends the same event, here 50 times at once: one payment row, every delivery answered.
      const payload = JSON.stringify({ id: 'evt_fixture_1', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_fixture_1', object: 'payment_intent' } } });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_fixture' });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
      const deliver = () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload }).then((r) => r.status);
      const statuses = await Promise.all(Array.from({ length: 50 }, deliver));
      // 200: applied or a duplicate of it; 409: the first delivery was still running (Stripe resends later).
      expect(statuses.every((s) => s === 200 || s === 409), statuses.join(',')).toBe(true);
      expect(statuses).toContain(200);
      expect(await deliver()).toBe(200);
      expect(await count('payments')).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await task.destroy();
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await db.end();
    }
  });
});
