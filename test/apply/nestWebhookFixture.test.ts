import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const SECRET = 'whsec_nest_fixture';

/**
 * Issue #19 for NestJS webhooks: the fixture's controller (stripe.webhooks.constructEvent on the raw body, inside a
 * try that answers 400) after `apply --yes` type-checks and a second apply changes nothing; then, against real
 * PostgreSQL, one Stripe event delivered twice, and 20 times at once, is applied once.
 */
describe.skipIf(skip !== undefined)('apply on the NestJS Stripe webhook fixture', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('nestjs-webhook');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wraps the handling after the signature check in the controller method, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    const controller = await readFile(path.join(copy.dir, 'src/webhooks.controller.ts'), 'utf8');
    expect(controller.indexOf('stripe.webhooks.constructEvent(')).toBeLessThan(controller.indexOf("onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {"));
    expect(controller).toContain('throw new HttpException(answered.body, answered.status)');
    expect(controller).not.toContain('@Idempotent');
    expect(await compile(copy.dir)).toBe('');

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/webhooks.controller.ts'), 'utf8')).toBe(controller);
  }, 240_000);

  it('applies one event delivered twice, and 20 times at once, once', async () => {
    schema = await createAppSchema('wt_webhooks_nest', copy.migration, 'CREATE TABLE payments (id serial PRIMARY KEY, intent text NOT NULL)');
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_WEBHOOK_SECRET: SECRET });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Promise<INestApplication> };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: { end(): Promise<void> } };
    const app = await createApp();
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks/stripe`;
    const count = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM payments')).rows[0].n as number;
    const event = (id: string) => JSON.stringify({ id, object: 'event', type: 'payment_intent.succeeded', data: { object: { id: `pi_${id}`, object: 'payment_intent' } } });
    const deliver = (payload: string, secret = SECRET) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) }, body: payload }).then((r) => r.status);
    try {
      expect(await deliver(event('evt_forged'), 'whsec_other')).toBe(400);
      expect(await deliver(event('evt_nest_1'))).toBe(200);
      expect(await deliver(event('evt_nest_1'))).toBe(200);
      expect(await count()).toBe(1);
      const statuses = await Promise.all(Array.from({ length: 20 }, () => deliver(event('evt_nest_2'))));
      // 200: applied or a duplicate of it; 409: the first delivery was still running (Stripe resends later).
      expect(statuses.every((s) => s === 200 || s === 409), statuses.join(',')).toBe(true);
      expect(statuses).toContain(200);
      expect(await deliver(event('evt_nest_2'))).toBe(200);
      expect(await count()).toBe(2);
    } finally {
      await app.close();
      await db.end();
    }
  }, 240_000);
});
