import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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
    scaffold = { ...(await load('index.js')), ...(await load('webhooks/webhooks.js')), ...(await load('webhooks/verify.js')), ...(await load('cron/guard.js')) };
    const migration = readFileSync(path.join(generated.dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8');
    const pool = scaffold.createPool(path.join(dir, 'store.db'));
    pool.db.exec(migration);
    pools.push(pool);
  });

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

  it('20 concurrent deliveries of one signed Stripe event: the handler runs once, every delivery gets 2xx', async () => {
    let applied = 0;
    const processors = [instance(), instance()].map((core) =>
      scaffold.createWebhookProcessor({
        core,
        action: scaffold.ACTIONS.handleStripeWebhook,
        source: scaffold.stripeSource(SECRET),
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
  });

  it('two instances fire the same slot: the job runs once, the other gets duplicate or overlap', async () => {
    let runs = 0;
    const guards = [instance(), instance()].map((core) => new scaffold.CronGuard({ core }));
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
  });
});
