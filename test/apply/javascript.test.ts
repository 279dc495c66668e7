import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, fakeStripe, type AppSchema } from './blackBox.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

/** Issue #19 for JavaScript: the CommonJS Express fixture gets require()s, not imports, and a .js instance module. */
describe.skipIf(skip !== undefined)('apply on the CommonJS Express fixture (express-js)', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('express-js');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wires the route and the Stripe call with require(), passes node --check and the app test, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.js', 'src/routes/orders.js', 'test/app.test.js']);
    const routes = await readFile(path.join(copy.dir, 'src/routes/orders.js'), 'utf8');
    expect(routes).toContain("const { idempotency } = require('../idempotency/instance');");
    expect(routes).toContain("ordersRouter.post('/orders', idempotency.createOrder, async (req, res, next) => {");
    expect(routes).toContain("{ amount: price * quantity, currency: 'eur' }, stripeRequestOptions(idempotencyContext)");
    expect(routes).not.toMatch(/^import /m);
    for (const file of first.changes) await run(process.execPath, ['--check', path.join(copy.dir, file.path)]);
    await run(process.execPath, ['--test', 'test/'], { cwd: copy.dir });

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/routes/orders.js'), 'utf8')).toBe(routes);
  });

  it('runs the order once for 50 concurrent requests with the same key', async () => {
    schema = await createAppSchema('expressjs', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, payment_intent text NOT NULL)');
    const stripe = await fakeStripe();
    process.env['DATABASE_URL'] = schema.url;
    process.env['STRIPE_API_BASE'] = stripe.base;
    const load = createRequire(path.join(copy.dir, 'package.json'));
    const { createApp } = load('./src/app.js') as { createApp: () => Express };
    const { db } = load('./src/db.js') as { db: Pool };
    // The instance module apply wrote exports the store's pool: the app's shutdown closes it (below, with its own).
    const { pool: storePool } = load('./src/idempotency/instance.js') as { pool: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
      const request = { key: 'order-js-1', user: 'user-1', body: { sku: 'sku-mug', quantity: 2 } };
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number);
      expect(stripe.keys).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      expect(storePool.totalCount).toBeGreaterThan(0);
      await storePool.end();
      expect(storePool.ended).toBe(true);
      await stripe.close();
    }
  });
});
