import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, fakeStripe, type AppSchema } from './blackBox.js';
import { applyAgain, compile, copyFixture, runOwnTests, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const PAYMENTS = 'src/controllers/payment.controller.ts';
const REFUNDS = 'src/controllers/refund.controller.ts';
const ROUTES = 'src/routes/payments.routes.ts';

/**
 * Issue #19: routes that pass their handler by name (`router.post('/payments', createPayment)` with the function in
 * controllers/, `refundController.create` as an object's method) get the provider calls keyed where the handler is
 * declared, from the handler's own req; a handler two routes share is left as a manual step naming the other use.
 */
describe.skipIf(skip !== undefined)('apply on an Express app whose routes name handlers declared in controllers/', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('express-controllers');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('--dry-run writes nothing', async () => {
    const before = await snapshotTree(copy.dir);
    const preview = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    expect(preview.written).toBe(false);
    expect(preview.changes.map((c) => c.path)).toContain(PAYMENTS);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  }, 300_000);

  it('keys the calls in the named handlers, leaves the shared one, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual([PAYMENTS, REFUNDS, 'src/idempotency/instance.ts', ROUTES, 'test/app.test.ts']);

    const payments = await read(PAYMENTS);
    expect(payments).toContain(`export async function createPayment(req: Request, res: Response, next: NextFunction): Promise<void> {
  try {
    const idempotencyContext = idempotencyOf(req);
    if (!idempotencyContext) throw new Error('idempotency middleware is not mounted on this route');`);
    expect(payments).toContain('stripe.paymentIntents.create({ amount, currency }, stripeRequestOptions(idempotencyContext));');
    // createCharge serves /charges and /v1/charges: untouched, and the step says where the other use is.
    expect(payments).toContain("stripe.paymentIntents.create({ amount, currency: 'eur', confirm: true });");
    const shared = first.manual.filter((m) => m.action === 'createCharge' && m.reason.includes('also used at'));
    expect(shared).toEqual([expect.objectContaining({ file: PAYMENTS, reason: expect.stringContaining(`${ROUTES}:10`) })]);

    const refunds = await read(REFUNDS);
    expect(refunds).toContain("  async create(req: Request, res: Response): Promise<void> {\n    const idempotencyContext = idempotencyOf(req);\n");
    expect(refunds).toContain('stripe.refunds.create({ payment_intent: paymentIntent }, stripeRequestOptions(idempotencyContext));');
    expect(refunds).toContain("import { stripeRequestOptions } from '../idempotency/providers.js';");

    // createPayment reads req.user.id: the instance's principal reads the same. app.use(authenticate) runs before the
    // router is mounted, so every route is authenticated, whatever its own arguments (issue #19/#15).
    expect(await read('src/idempotency/instance.ts')).toContain('.user?.id');
    expect(first.manual.filter((m) => m.reason.startsWith('the route has no authentication')).map((m) => m.action)).toEqual([]);

    const routes = await read(ROUTES);
    expect(routes).toContain("paymentsRouter.post('/payments', idempotency.createPayment, createPayment);");
    expect(routes).toContain("paymentsRouter.post('/refunds', idempotency.createRefund, refundController.create);");
    expect(first.edits.filter((e) => e.summary.startsWith('follows the handler')).map((e) => e.file)).toEqual([PAYMENTS, REFUNDS]);

    expect(await compile(copy.dir)).toBe('');
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    await applyAgain(copy.dir);
  }, 300_000);

  it('runs the payment once for 50 concurrent requests with the same key, and Stripe sees one derived key', async () => {
    schema = await createAppSchema('wt_byname_named', copy.migration, 'CREATE TABLE payments (id serial PRIMARY KEY, owner text NOT NULL, amount int NOT NULL, currency text NOT NULL, payment_intent text NOT NULL)');
    const stripe = await fakeStripe();
    process.env['DATABASE_URL'] = schema.url;
    process.env['STRIPE_API_BASE'] = stripe.base;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`;
      const request = { key: 'payment-5c1d', user: 'user-1', body: { amount: 2400, currency: 'eur' } };
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM payments')).rows[0].n as number);
      expect(stripe.keys).toHaveLength(1);
      expect(stripe.keys[0]).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      await stripe.close();
    }
  });
});
