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
import { compile, copyFixture, runOwnTests, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

describe.skipIf(skip !== undefined)('apply on the Express fixture app', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('express');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wires the route and the Stripe call, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/routes/orders.ts', 'test/app.test.ts']);
    // The app's own request to the route sends a key now, as every caller must.
    expect(await readFile(path.join(copy.dir, 'test/app.test.ts'), 'utf8')).toContain("'Idempotency-Key': randomUUID()");
    const routes = await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8');
    expect(routes).toContain("ordersRouter.post('/orders', idempotency.createOrder, async (req, res, next) => {");
    expect(routes).toContain("{ amount: price * quantity, currency: 'eur' }, stripeRequestOptions(idempotencyContext)");
    // The config's source follows the route down past the import apply added.
    const routeLine = routes.split('\n').findIndex((line) => line.includes("ordersRouter.post('/orders'")) + 1;
    const config = JSON.parse(await readFile(path.join(copy.dir, 'idempotency.config.json'), 'utf8')) as { actions: Array<{ name: string; source?: string }> };
    expect(config.actions.find((a) => a.name === 'createOrder')?.source).toBe(`src/routes/orders.ts:${routeLine}`);
    expect(first.sources?.moved).toBe(1);
    expect(await compile(copy.dir)).toBe('');
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const record = JSON.parse(await readFile(path.join(copy.dir, '.idempotency-builder/apply.json'), 'utf8')) as { actions: Array<{ action: string; applied: unknown[] }> };
    expect(record.actions.find((a) => a.action === 'createOrder')?.applied).toHaveLength(4); // the route, the Stripe call, the instance, and the app test's key

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8')).toBe(routes);
  });

  it('runs the order once for 50 concurrent requests with the same key, and Stripe sees one derived key', async () => {
    schema = await createAppSchema('express', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, payment_intent text NOT NULL)');
    const stripe = await fakeStripe();
    process.env['DATABASE_URL'] = schema.url;
    process.env['STRIPE_API_BASE'] = stripe.base;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
      const request = { key: 'order-7f3a', user: 'user-1', body: { sku: 'sku-mug', quantity: 2 } };
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number);
      expect(stripe.keys).toHaveLength(1);
      expect(stripe.keys[0]).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      await stripe.close();
    }
  });
});
