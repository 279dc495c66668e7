import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesignModel } from '../../../src/model/types.js';
import { triggerFiles } from '../../../src/scaffold/triggers/index.js';
import type { Generated } from '../generateInto.js';
import type { Loose } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

/**
 * Issue #18 on a store other than PostgreSQL: the webhook processor and the cron guard use only the
 * IdempotencyStore interface, so on SQLite (embedded: this suite always runs) concurrent duplicate deliveries of a
 * signed Stripe event run once and all get 2xx, and two guards firing one slot run it once. What needs more than
 * the interface (listStuck for reconciliation, the PostgreSQL ordering table and suites) is left out and said so.
 */
const SECRET = 'whsec_sqlite_test';
const stripe = new Stripe('sk_test_unused');

async function sqliteTriggersModel(): Promise<DesignModel> {
  const model = await triggersModel('rabbitmq');
  model.stack.storeDatabase = 'sqlite';
  return model;
}

describe('trigger runtime on the SQLite store', () => {
  let generated: Generated;
  let dir: string;
  let scaffold: Record<string, Loose>;
  const pools: Loose[] = [];

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await sqliteTriggersModel(), ['consumers/bullmq.ts', 'consumers/nats.ts', 'consumers/kafka.ts', 'webhooks/fastify.ts']);
    expect(generated.tscOutput).toBe('');
    dir = await mkdtemp(path.join(tmpdir(), 'idem-triggers-sqlite-'));
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    scaffold = { ...(await load('index.js')), ...(await load('webhooks/webhooks.js')), ...(await load('webhooks/verify.js')), ...(await load('cron/guard.js')), ...(await load('cron/metrics.js')), ...(await load('webhooks/metrics.js')), ...(await load('consumers/handler.js')), ...(await load('consumers/metrics.js')) };
    const migration = readFileSync(path.join(generated.dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8');
    const pool = scaffold.createPool(path.join(dir, 'store.db'));
    pool.db.exec(migration);
    pools.push(pool);
    // tsc over the whole scaffold: minutes on a saturated machine.
  }, 300_000);

  afterAll(async () => {
    for (const pool of pools) pool.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One application instance: its own connections to the same database file. */
  function instance() {
    const pool = scaffold.createPool(path.join(dir, 'store.db'));
    pools.push(pool);
    return scaffold.createIdempotency({ pool }).core;
  }

  it('ships the processors, not what needs PostgreSQL or listStuck, and TRIGGERS.md says why', async () => {
    const files = triggerFiles(await sqliteTriggersModel(), 'express', 'sqlite');
    const paths = files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['webhooks/verify.ts', 'webhooks/webhooks.ts', 'webhooks/express.ts', 'consumers/handler.ts', 'consumers/amqplib.ts', 'cron/guard.ts', 'cron/metrics.ts', 'TRIGGERS.md']));
    for (const absent of ['webhooks/ordering.ts', 'migrations/002_webhook_object_versions.sql', 'webhooks/webhooks.test.ts', 'cron/cron.test.ts', 'reconcile/job.ts', 'reconcile/reconcile.ts']) expect(paths).not.toContain(absent);
    const readme = files.find((file) => file.path === 'TRIGGERS.md')!.contents;
    expect(readme).toContain('## Reconciliation job: not generated for SQLite');
    expect(readme).toContain('IdempotencyStore.listStuck');
    expect(readme).not.toContain('PgOrderingGuard');
  });

  /** A counter's value for the given labels, from a registry of its own. */
  async function counter(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
    const metric = (await registry.getMetricsAsJSON()).find((entry) => entry.name === name);
    const value = metric?.values.find((entry) => Object.entries(labels).every(([label, want]) => entry.labels[label] === want));
    return Number(value?.value ?? 0);
  }

  it('20 concurrent deliveries of one signed Stripe event: the handler runs once, every delivery gets 2xx, the metrics count it', async () => {
    let applied = 0;
    const registry = new Registry();
    const events = scaffold.createWebhookMetrics(registry);
    const processors = [instance(), instance()].map((core) =>
      scaffold.createWebhookProcessor({
        core,
        action: scaffold.ACTIONS.handleStripeWebhook,
        source: scaffold.stripeSource(SECRET),
        events,
        handle: async () => {
          applied += 1;
        },
      }),
    );
    const payload = JSON.stringify({ id: `evt_${randomUUID().slice(0, 8)}`, object: 'event', type: 'payment_intent.succeeded', created: Math.floor(Date.now() / 1000), data: { object: { id: 'pi_1', object: 'payment_intent' } } });
    const rawBody = Buffer.from(payload);
    const headers = { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) };
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => processors[index % 2]({ rawBody, headers })));
    expect(applied).toBe(1);
    for (const response of responses) expect(response.status).toBe(200);
    const forged = await processors[0]({ rawBody, headers: { ...headers, 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_other' }) } });
    expect(forged.status).toBe(400);
    const labels = { action: 'handleStripeWebhook', provider: 'stripe' };
    expect(await counter(registry, 'idempotency_webhook_events_total', { ...labels, outcome: 'applied' })).toBe(1);
    expect(await counter(registry, 'idempotency_webhook_events_total', { ...labels, outcome: 'duplicate' })).toBe(19);
    expect(await counter(registry, 'idempotency_webhook_events_total', { ...labels, outcome: 'rejected_signature' })).toBe(1);
  });

  it('consumer metrics: a redelivered message counts as a redelivery, a poison message as dead-lettered', async () => {
    const registry = new Registry();
    const core = instance();
    let effects = 0;
    const onMessage = scaffold.idempotentHandler({
      core,
      action: scaffold.ACTIONS.fulfilOrder,
      messageIdOf: (message: { id: string }) => message.id,
      maxAttempts: 1,
      events: scaffold.createConsumerMetrics(registry),
      handle: async (message: { id: string; poison?: boolean }) => {
        if (message.poison) throw new Error('poison');
        effects += 1;
      },
    });
    const id = `msg-${randomUUID().slice(0, 8)}`;
    expect((await onMessage({ id })).kind).toBe('done');
    expect((await onMessage({ id })).kind).toBe('duplicate');
    expect((await onMessage({ id: `${id}-poison`, poison: true })).kind).toBe('dead');
    expect(effects).toBe(1);
    expect(await counter(registry, 'idempotency_consumer_redeliveries_total', { action: 'fulfilOrder' })).toBe(1);
    expect(await counter(registry, 'idempotency_consumer_dead_lettered_total', { action: 'fulfilOrder' })).toBe(1);
    expect(await counter(registry, 'idempotency_consumer_messages_total', { action: 'fulfilOrder', outcome: 'done' })).toBe(1);
  });

  it('two instances fire the same slot: the job runs once, the other gets duplicate or overlap', async () => {
    let runs = 0;
    const registry = new Registry();
    const events = scaffold.createCronMetrics(registry);
    const guards = [instance(), instance()].map((core) => new scaffold.CronGuard({ core, events }));
    const job = `ledger-${randomUUID().slice(0, 8)}`;
    const firedAt = Date.now();
    const outcomes = await Promise.all(
      guards.map((guard) =>
        guard.runInterval(scaffold.ACTIONS.closeLedgerDay, job, 60_000, async () => {
          runs += 1;
        }, firedAt),
      ),
    );
    expect(runs).toBe(1);
    expect(outcomes.filter((outcome: string) => outcome === 'ran')).toHaveLength(1);
    for (const outcome of outcomes) expect(['ran', 'duplicate', 'overlap']).toContain(outcome);
    expect(await counter(registry, 'idempotency_cron_slots_total', { job, outcome: 'ran' })).toBe(1);
    const other = outcomes.find((outcome: string) => outcome !== 'ran');
    expect(await counter(registry, 'idempotency_cron_slots_total', { job, outcome: other })).toBe(1);
  });

  it('a slot whose previous one never ran is counted as missed, and the alert rules watch it', async () => {
    const registry = new Registry();
    const guard = new scaffold.CronGuard({ core: instance(), events: scaffold.createCronMetrics(registry) });
    const job = `report-${randomUUID().slice(0, 8)}`;
    const interval = 60_000;
    const start = Math.floor(Date.now() / interval) * interval - 10 * interval;
    // Slot 0 ran, slot 1 never did (the scheduler was down), slot 2 runs now and finds the gap.
    expect(await guard.run(scaffold.ACTIONS.closeLedgerDay, job, new Date(start), async () => undefined)).toBe('ran');
    expect(await guard.run(scaffold.ACTIONS.closeLedgerDay, job, new Date(start + 2 * interval), async () => undefined, new Date(start + interval))).toBe('ran');
    expect(await counter(registry, 'idempotency_cron_missed_slots_total', { job, reason: 'missed' })).toBe(1);
    const alerts = generated.files.find((file) => file.path === 'src/idempotency/idempotency-alerts.yml')!.contents;
    for (const rule of ['IdempotencyCronSlotMissed', 'IdempotencyConsumerDeadLettered', 'IdempotencyWebhookFailing']) expect(alerts).toContain(`- alert: ${rule}`);
    expect(alerts).toContain('idempotency_cron_missed_slots_total');
    expect(alerts).toContain('idempotency_consumer_dead_lettered_total');
  });
});
