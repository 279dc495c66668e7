import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, fakeStripe, settled, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const HEX_KEY = /^[0-9a-f]{64}$/;
const NOT_IN_HANDLER = /not made inside the route handler/;

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped the requests against PostgreSQL: ${skip}`);

/**
 * Issue #19, a service keyed for one action and reached later by another: the order route is protected first
 * (`apply --action createOrder` keys chargeOrder in payments.ts), then the tip route, whose handler reaches the same
 * call through chargeTip (tips.ts). The second apply passes the tip route's claim down to the parameter chargeOrder
 * has already (chargeTip gaining one on the way), leaves payments.ts as it is, and names no step twice. Each route's
 * request then reaches the one call site with its own claim (the action is part of the derivation).
 */
describe('apply threads a second action through a service an earlier apply keyed for the first', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');
  const apply = (action?: string) => runApply({ cwd: copy.dir, yes: true, quiet: true, ...(action ? { action } : {}) }, { interactive: false });
  beforeAll(async () => {
    copy = await copyFixture('express-service-shared-call');
  }, 120_000);
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('keys the order route first, then threads the tip route to the same call, type-checks each time, and changes nothing the third time', async () => {
    const first = await apply('createOrder');
    expect(first.stale).toEqual([]);
    const payments = await read('src/payments.ts');
    expect(payments).toContain('export async function chargeOrder(amountCents: number, customer?: string, idempotencyContext?: ProviderKeySource): Promise<string> {');
    expect(payments).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined);');
    expect(await read('src/tips.ts')).toContain('return chargeOrder(Math.min(amountCents, MAX_TIP_CENTS));');
    expect(first.manual.map((m) => m.reason)).toContainEqual(expect.stringMatching(/^chargeOrder is also called at src\/tips\.ts:7 without a context/));
    expect(await compile(copy.dir)).toBe('');

    const second = await apply();
    expect(second.stale).toEqual([]);
    expect(second.changes.map((c) => c.path).sort()).toEqual(['src/routes/tips.ts', 'src/tips.ts']);
    expect(await read('src/payments.ts')).toBe(payments);
    expect(await read('src/tips.ts')).toContain('export async function chargeTip(amountCents: number, idempotencyContext?: ProviderKeySource): Promise<string> {\n  return chargeOrder(Math.min(amountCents, MAX_TIP_CENTS), undefined, idempotencyContext);');
    const tips = await read('src/routes/tips.ts');
    expect(tips).toContain("tipsRouter.post('/tips', idempotency.addTip, async (req, res, next) => {");
    expect(tips).toContain('    const idempotencyContext = idempotencyOf(req);');
    expect(tips).toContain('const paymentIntent = await chargeTip(amountCents, idempotencyContext);');
    expect(second.edits.filter((e) => e.action === 'addTip').map((e) => e.summary)).toContainEqual(
      expect.stringMatching(/^passes this action's claim to stripe\.paymentIntents\.create \(line 7\), keyed from a context already/),
    );
    // One step a place: no generic "not inside the handler" step, and the tip route's call is no longer one without a context.
    expect(second.manual.filter((m) => NOT_IN_HANDLER.test(m.reason) || m.reason.startsWith('chargeOrder is also called') || m.reason.startsWith('chargeTip is also called'))).toEqual([]);
    const { findings } = await auditProject(copy.dir);
    expect(findings.filter((f) => f.ruleId === 'provider-call-without-key')).toEqual([]);
    expect(await compile(copy.dir)).toBe('');

    const tree = await snapshotTree(copy.dir);
    const third = await apply();
    expect(third.changes).toEqual([]);
    expect(third.written).toBe(false);
    expect(third.manual.filter((m) => NOT_IN_HANDLER.test(m.reason) || m.reason.startsWith('not keyed'))).toEqual([]);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it.skipIf(skip !== undefined)('each route keys the shared call from its own claim, and a retried tip sends the same key again', async () => {
    // The tips table is missing at first: the first tip fails after its Stripe call, and the 500 releases the claim.
    schema = await createAppSchema('thread2_shared_call', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, payment_intent text NOT NULL)');
    const stripe = await fakeStripe();
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_API_BASE: stripe.base });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { stripeRequestOptions } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/idempotency/providers.js')).href)) as { stripeRequestOptions: (context: object) => { idempotencyKey: string } };
      const order = await settled(`${base}/orders`, { key: 'order-key-1', user: 'user-1', body: { sku: 'sku-mug', quantity: 1 } });
      expect(order.status, order.body).toBe(201);
      const failed = await settled(`${base}/tips`, { key: 'tip-key-1', user: 'user-1', body: { amountCents: 300 } });
      expect(failed.status).toBe(500);
      expect(stripe.keys).toHaveLength(2);
      const [orderKey, tipKey] = stripe.keys;
      // Each call is keyed from its own route's claim, through the one call site in payments.ts.
      expect(orderKey).toBe(stripeRequestOptions({ scope: 'user-1', key: 'order-key-1', action: 'createOrder' }).idempotencyKey);
      expect(tipKey).toBe(stripeRequestOptions({ scope: 'user-1', key: 'tip-key-1', action: 'addTip' }).idempotencyKey);
      expect(tipKey).toMatch(HEX_KEY);
      // The same client key under the other action would still be another Stripe key: the action is derived in.
      expect(stripeRequestOptions({ scope: 'user-1', key: 'tip-key-1', action: 'createOrder' }).idempotencyKey).not.toBe(tipKey);

      await schema.pool.query('CREATE TABLE tips (id serial PRIMARY KEY, amount_cents int NOT NULL, payment_intent text NOT NULL)');
      const retried = await settled(`${base}/tips`, { key: 'tip-key-1', user: 'user-1', body: { amountCents: 300 } });
      expect(retried.status, retried.body).toBe(201);
      expect(stripe.keys).toEqual([orderKey, tipKey, tipKey]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      await stripe.close();
    }
  });
});
