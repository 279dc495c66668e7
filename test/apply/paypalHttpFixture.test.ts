import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLY_RECORD_PATH } from '../../src/apply/applyRecord.js';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const ROUTE = 'src/routes/orders.ts';

/**
 * Stands in for PayPal's Orders API: remembers each request's PayPal-Request-Id and answers 500 to the requests
 * `failing` names (by their position), so the app's request fails and its retry runs the handler again.
 */
async function fakePaypal(failing: ReadonlySet<number>): Promise<{ base: string; ids: string[]; close(): Promise<void> }> {
  const ids: string[] = [];
  const server = createServer((req, res) => {
    ids.push(String(req.headers['paypal-request-id'] ?? ''));
    const position = ids.length - 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(failing.has(position) ? 500 : 201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(failing.has(position) ? { name: 'INTERNAL_SERVER_ERROR' } : { id: `ORDER-${position}`, status: 'CREATED' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ids, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Issue #19 for a payment call over raw HTTP: apply adds the PayPal-Request-Id header with the derived key to the
 * route's fetch, the app type-checks, a second apply changes nothing; against PostgreSQL and a stand-in PayPal, a
 * retry of a failed request sends PayPal the same PayPal-Request-Id and another key a different one.
 */
describe.skipIf(skip !== undefined)('apply on an Express route calling PayPal\u2019s REST API with fetch', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('paypal-http');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('adds the header, records the edit, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.manual.map((m) => m.reason).filter((r) => !r.startsWith('callers must now send'))).toEqual([]);
    const route = await readFile(path.join(copy.dir, ROUTE), 'utf8');
    expect(route).toContain("authorization: `Bearer ${process.env['PAYPAL_ACCESS_TOKEN'] ?? ''}`,");
    expect(route).toMatch(/'PayPal-Request-Id': paypalRequestId\(idempotencyContext\)/);
    expect(route).toContain("import { paypalRequestId } from '../idempotency/providers.js';");
    const record = JSON.parse(await readFile(path.join(copy.dir, APPLY_RECORD_PATH), 'utf8')) as { actions: Array<{ action: string; applied: Array<{ summary: string }> }> };
    expect(record.actions.find((a) => a.action === 'createOrder')?.applied.map((a) => a.summary)).toContainEqual(expect.stringContaining('as the PayPal-Request-Id header of paypal v2/checkout/orders'));

    expect(await compile(copy.dir), 'compile').toBe('');
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await readFile(path.join(copy.dir, ROUTE), 'utf8')).toBe(route);
  }, 300_000);

  it('a retry of a failed request sends the same PayPal-Request-Id; another key sends another', async () => {
    schema = await createAppSchema('apply19_paypal_http', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, paypal_order text NOT NULL)');
    const paypal = await fakePaypal(new Set([0]));
    Object.assign(process.env, { DATABASE_URL: schema.url, PAYPAL_API_BASE: paypal.base });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
    const order = (key: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ sku: 'sku-mug', quantity: 2 }) }).then((r) => r.status);
    try {
      // PayPal fails the first attempt: the app answers 502 and gives the key back; the retry runs the handler again.
      expect(await order('order-a')).toBe(502);
      expect(await order('order-a')).toBe(201);
      // Completed: a third attempt is replayed without calling PayPal.
      expect(await order('order-a')).toBe(201);
      expect(await order('order-b')).toBe(201);
      expect(paypal.ids).toHaveLength(3);
      const [failed, retried, other] = paypal.ids;
      expect(failed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(retried).toBe(failed);
      expect(other).not.toBe(failed);
      expect((await schema.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      await paypal.close();
    }
  }, 120_000);
});
