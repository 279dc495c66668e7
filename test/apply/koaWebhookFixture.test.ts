import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Koa from 'koa';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, signedStripeEvent, stripeDelivery, WEBHOOK_SECRET, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const ROUTES = 'src/routes/webhooks.ts';
const WEBHOOK = 'src/webhooks/stripe.ts';

/**
 * Issue #19 on Koa: a @koa/router webhook route whose handler is the default export of another module, re-exported
 * through an index (`export { default } from './stripe.js'`): its event handling is wrapped in onceForEvent where it
 * is declared, answering through ctx; the app type-checks, a second apply changes nothing, and 50 signed deliveries
 * of one event take effect once.
 */
describe.skipIf(skip !== undefined)('apply on a Koa app whose Stripe webhook handler is a re-exported default export', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('koa-webhook');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('wraps the followed handler, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.manual).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', WEBHOOK]);
    const webhook = await read(WEBHOOK);
    expect(webhook).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    if (event.type === 'payment_intent.succeeded') {
      await db.query('INSERT INTO fulfilments (intent) VALUES ($1)', [event.data.object.id]);
    }
  });
  if (answered) {
    ctx.status = answered.status;
    ctx.set(answered.headers);
    ctx.body = answered.body;
    return;
  }
  ctx.body = { received: true };`);
    expect(await read(ROUTES)).toContain("webhooksRouter.post('/webhooks/stripe', handleStripeEvent);");

    expect(await compile(copy.dir)).toBe('');
    const before = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.manual).toEqual([]);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  }, 300_000);

  it('applies an event delivered 50 times at once exactly once, answering every delivery', async () => {
    schema = await createAppSchema('koa_webhook', copy.migration, 'CREATE TABLE fulfilments (id serial PRIMARY KEY, intent text NOT NULL)');
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Koa };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
      const event = signedStripeEvent('evt_koa_1');
      const deliver = (delivery = event) => fetch(url, stripeDelivery(delivery)).then((r) => r.status);
      const count = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM fulfilments')).rows[0].n as number;

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
