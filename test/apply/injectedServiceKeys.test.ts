import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, fakeStripe, settled, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const HEX_KEY = /^[0-9a-f]{64}$/;
/** What stripe-node sends on a POST given no key: a random one of its own, as an unkeyed call always did. */
const UNKEYED = /^stripe-node-retry-[0-9a-f-]{36}$/;

/**
 * Issue #19: the unkeyed Stripe call is not in the route handler but in a service it calls. apply threads the
 * handler's claim down (a trailing optional `idempotencyContext` parameter on each function on the way, passed by
 * its caller) and keys the call with it; a caller that passes nothing sends no key, exactly as before. In NestJS the
 * interceptor holds the claim for the route's async call chain, so the service reads it itself with idempotencyOf().
 */
describe.skipIf(skip !== undefined)('apply threads the idempotency key into services', { timeout: 300_000 }, () => {
  describe('Express route → imported payments.ts function (one hop, another unwired caller)', () => {
    let copy: FixtureCopy;
    let schema: AppSchema | undefined;
    beforeAll(async () => {
      copy = await copyFixture('express-service');
    });
    afterAll(async () => {
      await schema?.drop();
      await copy?.remove();
    });

    it('keys the call in payments.ts from the route, lists the other caller, type-checks, and is a no-op the second time', async () => {
      const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(first.stale).toEqual([]);
      const payments = await readFile(path.join(copy.dir, 'src/payments.ts'), 'utf8');
      expect(payments).toContain('export async function chargeOrder(amountCents: number, customer?: string, idempotencyContext?: ProviderKeySource): Promise<string> {');
      expect(payments).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined);');
      expect(payments).toContain("import type { ProviderKeySource } from './idempotency/providers.js';");
      const route = await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8');
      // The skipped optional argument is passed as undefined, so the context lands in its own place.
      expect(route).toContain('await chargeOrder(price * quantity, undefined, idempotencyContext);');
      expect(route).toContain('const idempotencyContext = idempotencyOf(req);');
      const job = await readFile(path.join(copy.dir, 'src/jobs/retryDeclined.ts'), 'utf8');
      expect(job).toContain('return chargeOrder(amountCents, customer);');
      const reasons = first.manual.map((m) => m.reason);
      expect(reasons).toContainEqual(expect.stringContaining('chargeOrder is also called at src/jobs/retryDeclined.ts:5 without a context'));
      expect(reasons.some((r) => r.includes('not made inside the route handler'))).toBe(false);
      expect(await compile(copy.dir)).toBe('');

      const tree = await snapshotTree(copy.dir);
      const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(again.written).toBe(false);
      expect(again.manual.map((m) => m.reason).some((r) => r.includes('not made inside the route handler'))).toBe(false);
      expect(await snapshotTree(copy.dir)).toEqual(tree);
    });

    it('sends Stripe one derived key per request key through the service, and none from the unwired job', async () => {
      schema = await createAppSchema('inject19_express_service', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, payment_intent text NOT NULL)');
      const stripe = await fakeStripe();
      Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_API_BASE: stripe.base });
      const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
      const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
      const { retryDeclined } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/jobs/retryDeclined.js')).href)) as { retryDeclined: (amount: number, customer: string) => Promise<string> };
      const server = createApp().listen(0);
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
        const request = { key: 'order-19a', user: 'user-1', body: { sku: 'sku-mug', quantity: 2 } };
        const pool = schema.pool;
        await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number, 10);
        expect(stripe.keys).toHaveLength(1);
        expect(stripe.keys[0]).toMatch(HEX_KEY);
        const other = await settled(url, { ...request, key: 'order-19b' });
        expect(other.status).toBe(201);
        expect(stripe.keys).toHaveLength(2);
        expect(stripe.keys[1]).toMatch(HEX_KEY);
        expect(stripe.keys[1]).not.toBe(stripe.keys[0]);
        // The back-office job passes no context: the call goes out as before apply, with only stripe-node's own
        // per-call key (a fresh one each time, so no protection against a re-run).
        await retryDeclined(500, 'cus_1');
        expect(stripe.keys[2]).toMatch(UNKEYED);
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await db.end();
        await stripe.close();
      }
    });
  });

  describe('NestJS controller → SubscriptionsService → StripeService (two hops, no @Req(); an unprotected route calls the same service)', () => {
    let copy: FixtureCopy;
    let schema: AppSchema | undefined;
    beforeAll(async () => {
      copy = await copyFixture('nestjs-service');
    });
    afterAll(async () => {
      await schema?.drop();
      await copy?.remove();
    });

    it('keys the call where it is made from idempotencyOf(), changes no signature, notes the unprotected caller, type-checks, and is a no-op the second time', async () => {
      const controllerBefore = await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.controller.ts'), 'utf8');
      const serviceBefore = await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.service.ts'), 'utf8');
      const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(first.stale).toEqual([]);
      const reasons = first.manual.map((m) => m.reason);
      expect(reasons).toEqual([
        expect.stringContaining('callers must now send an Idempotency-Key header'),
        expect.stringMatching(/^subscribeMonthly is also called at src\/subscriptions\/subscriptions\.controller\.ts:\d+: the Stripe call it reaches is keyed only while it runs for a protected route \(idempotencyOf\(\) reads that route's claim; elsewhere it is undefined and the call sends no idempotency key, as before\)/),
      ]);
      expect(reasons.some((r) => /take @Req\(\)|pass idempotencyOf\(request\) down/.test(r))).toBe(false);
      // The controller is only marked; the service in the middle is untouched.
      const controller = await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.controller.ts'), 'utf8');
      expect(controller).not.toContain('@Req()');
      expect(controller).not.toContain('idempotencyContext');
      expect(controller.replace('\n  @Idempotent(ACTIONS.subscribeMonthly)', '').replace("import { Idempotent, ACTIONS } from '../idempotency/index.js';\n", '')).toBe(controllerBefore);
      expect(await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.service.ts'), 'utf8')).toBe(serviceBefore);
      const stripeService = await readFile(path.join(copy.dir, 'src/stripe/stripe.service.ts'), 'utf8');
      expect(stripeService).toContain('  async createSubscription(payload: SubscriptionPayload) {\n    const idempotencyContext = idempotencyOf();\n');
      expect(stripeService).toContain('}, idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined);');
      expect(stripeService).toContain("import { idempotencyOf } from '../idempotency/index.js';");
      expect(first.edits.map((e) => e.summary)).toContainEqual(expect.stringContaining('read there with idempotencyOf(); run outside a protected route it sends what it sent before'));
      expect(await compile(copy.dir)).toBe('');

      const tree = await snapshotTree(copy.dir);
      const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(again.manual).toEqual(first.manual);
      expect(await snapshotTree(copy.dir)).toEqual(tree);
    });

    it('sends Stripe one derived key per request key, the same on a retry, and none from the unprotected route or a direct call', async () => {
      schema = await createAppSchema('inject19_nest_ambient', copy.migration, 'SELECT 1');
      const stripe = await fakeStripe();
      Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_API_BASE: stripe.base });
      const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Promise<INestApplication> };
      const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
      const { StripeService } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/stripe/stripe.service.js')).href)) as { StripeService: new () => { createSubscription(payload: { customerId: string; priceId: string }): Promise<unknown> } };
      const app = await createApp();
      await app.listen(0, '127.0.0.1');
      try {
        const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/subscriptions`;
        const post = (url: string, key: string | undefined) =>
          fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-user-id': 'customer-1', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify({ customerId: 'cus_19' }) });
        const request = (key: string) => ({ key, user: 'customer-1', body: { customerId: 'cus_19' } });

        const answer = await settled(`${base}/monthly`, request('subscribe-a'));
        expect(answer.status, answer.body).toBe(201);
        expect(stripe.keys).toEqual([expect.stringMatching(HEX_KEY)]);
        const [keyA] = stripe.keys;
        // The replay comes from the store: Stripe is not called again.
        expect((await settled(`${base}/monthly`, request('subscribe-a'))).status).toBe(201);
        expect(stripe.keys).toHaveLength(1);

        // Stripe fails, the claim is released, the retry runs the route again and sends Stripe the very same key.
        stripe.failNext();
        expect((await post(`${base}/monthly`, 'subscribe-b')).status).toBe(500);
        expect((await settled(`${base}/monthly`, request('subscribe-b'))).status).toBe(201);
        expect(stripe.keys).toHaveLength(3);
        expect(stripe.keys[1]).toMatch(HEX_KEY);
        expect(stripe.keys[2]).toBe(stripe.keys[1]);
        expect(stripe.keys[1]).not.toBe(keyA);

        // Two requests in flight together each key the service's call with their own claim.
        const both = await Promise.all([settled(`${base}/monthly`, request('subscribe-c')), settled(`${base}/monthly`, request('subscribe-d'))]);
        expect(both.map((b) => b.status)).toEqual([201, 201]);
        const pair = stripe.keys.slice(3);
        expect(pair).toHaveLength(2);
        expect(new Set([keyA, stripe.keys[1], ...pair]).size).toBe(4);

        // The unprotected route and a call outside any route send what they sent before apply: stripe-node's own key.
        expect((await post(`${base}/monthly/manual`, undefined)).status).toBe(201);
        expect(stripe.keys[5]).toMatch(UNKEYED);
        await new StripeService().createSubscription({ customerId: 'cus_19', priceId: 'price_monthly' });
        expect(stripe.keys[6]).toMatch(UNKEYED);
      } finally {
        await app.close();
        await db.end();
        await stripe.close();
      }
    });
  });
});
