import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, signedStripeEvent, stripeDelivery, WEBHOOK_SECRET, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const APP = 'src/app.ts';
const WEBHOOK = 'src/webhooks/stripe.webhook.ts';
const PAYMENTS = 'src/controllers/payments.controller.ts';
const REFUNDS = 'src/controllers/refunds.controller.ts';

/**
 * Issue #19: an Express app whose routes name handlers reached through an index's re-export under another name
 * (`export { handleStripeEvent as stripeWebhook } from`), `export * from` and `export default`: the Stripe webhook's
 * event handling is wrapped in onceForEvent where the handler is declared, the payment and refund calls are keyed
 * there, the app type-checks, a second apply changes nothing, and 50 signed deliveries of one event take effect once.
 */
describe.skipIf(skip !== undefined)('apply on an Express app whose webhook and payment handlers are re-exported by name', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('named-webhooks');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('wraps the followed webhook handler, keys the followed payment handlers, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    // Both HTTP handlers read req.user: authenticated; the webhook was followed. Only the callers' side is left.
    const left = (manual: typeof first.manual) => manual.filter((m) => !m.reason.startsWith('callers must now send an Idempotency-Key'));
    expect(left(first.manual)).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual([APP, REFUNDS, PAYMENTS, 'src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', WEBHOOK].sort());

    const webhook = await read(WEBHOOK);
    expect(webhook).toContain("import { ACTIONS } from '../idempotency/index.js';\nimport { onceForEvent } from '../idempotency/webhookEvent.js';\n");
    expect(webhook).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    if (event.type === 'payment_intent.succeeded') {
      await db.query('INSERT INTO fulfilments (intent) VALUES ($1)', [event.data.object.id]);
    }
  });
  if (answered) {
    res.status(answered.status).set(answered.headers).send(answered.body);
    return;
  }
  res.json({ received: true });`);
    expect(first.edits.filter((e) => e.summary.startsWith('follows the')).map((e) => e.file).sort()).toEqual([REFUNDS, PAYMENTS, WEBHOOK].sort());

    // The webhook route keeps its raw body and gets no request middleware; the payment routes get theirs.
    const app = await read(APP);
    expect(app).toContain("app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), stripeWebhook);");
    expect(app).toContain("app.post('/payments', idempotency.createPayment, createPayment);");
    expect(app).toContain("app.post('/refunds', idempotency.createRefund, refundPayment);");
    expect(await read(PAYMENTS)).toContain('stripe.paymentIntents.create({ amount, currency }, stripeRequestOptions(idempotencyContext));');
    expect(await read(REFUNDS)).toContain('const refundPayment = async (req: Request, res: Response): Promise<void> => {\n  const idempotencyContext = idempotencyOf(req);\n');
    expect(await read('src/idempotency/instance.ts')).toContain('.user?.id');

    expect(await compile(copy.dir)).toBe('');
    const before = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(left(again.manual)).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  }, 300_000);

  it('applies an event delivered 50 times at once exactly once, answering every delivery', async () => {
    schema = await createAppSchema('wt_webhookbyname', copy.migration, 'CREATE TABLE fulfilments (id serial PRIMARY KEY, intent text NOT NULL)');
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
      const event = signedStripeEvent('evt_named_1');
      const deliver = (delivery = event) => fetch(url, stripeDelivery(delivery)).then((r) => r.status);
      const count = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM fulfilments')).rows[0].n as number;

      // A forged signature is refused before anything is claimed or applied.
      expect(await deliver({ ...event, signature: 't=1,v1=forged' })).toBe(400);
      const statuses = await Promise.all(Array.from({ length: 50 }, () => deliver()));
      // 200: applied, or a duplicate of it; 409 only while the first delivery still runs (Stripe resends).
      expect(statuses.every((s) => s === 200 || s === 409), statuses.join(',')).toBe(true);
      expect(statuses).toContain(200);
      expect(await deliver()).toBe(200);
      expect(await count()).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  });
});
