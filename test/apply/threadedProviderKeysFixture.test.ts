import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLY_RECORD_PATH } from '../../src/apply/applyRecord.js';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const SERVICE = 'src/services/payments.ts';

/** Stands in for PayPal's Orders API: records the PayPal-Request-Id header of each request (undefined when absent). */
async function fakePaypal(): Promise<{ base: string; ids: Array<string | undefined>; close(): Promise<void> }> {
  const ids: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    const id = req.headers['paypal-request-id'];
    ids.push(Array.isArray(id) ? id[0] : id);
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `ORDER-${ids.length}`, status: 'CREATED' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ids, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Issue #19 beyond Stripe: the routes' provider calls are in a service, one through Adyen's SDK and one over raw HTTP
 * (axios) to PayPal's REST API. apply threads each route's claim down and keys each call the way the handler
 * transforms would (Adyen's request options, the PayPal-Request-Id header), only when a context is passed.
 */
describe('apply threads the key into services calling Adyen and PayPal', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  beforeAll(async () => {
    copy = await copyFixture('express-service-providers');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('keys the Adyen SDK call and the raw-HTTP PayPal call from the context, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    const service = await readFile(path.join(copy.dir, SERVICE), 'utf8');
    expect(service).toContain('export async function payByCard(amountMinor: number, reference: string, idempotencyContext?: ProviderKeySource): Promise<string> {');
    expect(service).toContain('}, idempotencyContext ? { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey } : undefined);');
    expect(service).toContain('export async function openPaypalOrder(amount: string, idempotencyContext?: ProviderKeySource): Promise<string> {');
    expect(service).toContain("...(idempotencyContext ? { 'PayPal-Request-Id': paypalRequestId(idempotencyContext) } : {}) } },");
    const route = await readFile(path.join(copy.dir, 'src/routes/checkout.ts'), 'utf8');
    expect(route).toContain('const psp = await payByCard(amountMinor, orderId, idempotencyContext);');
    expect(route).toContain('const paypalOrder = await openPaypalOrder((amountMinor / 100).toFixed(2), idempotencyContext);');
    // The back-office job passes no context and is left as it was, with a step naming the provider it reaches.
    expect(await readFile(path.join(copy.dir, 'src/retryCard.ts'), 'utf8')).toContain('return payByCard(amountMinor, reference);');
    const reasons = first.manual.map((m) => m.reason);
    expect(reasons).toContainEqual(expect.stringContaining('payByCard is also called at src/retryCard.ts:5 without a context: those calls still send Adyen no idempotency key'));
    expect(reasons.some((r) => r.includes('not made inside the route handler') || r.includes('Stripe'))).toBe(false);
    const summaries = first.edits.map((e) => e.summary);
    expect(summaries).toContainEqual(expect.stringContaining('passes the derived Adyen idempotency key to payments'));
    expect(summaries).toContainEqual(expect.stringContaining('passes the derived PayPal idempotency key as the PayPal-Request-Id header of paypal v2/checkout/orders'));
    // The record the document reads names the provider each threaded call reaches.
    const record = JSON.parse(await readFile(path.join(copy.dir, APPLY_RECORD_PATH), 'utf8')) as { actions: Array<{ action: string; applied: Array<{ summary: string }>; manual: Array<{ reason: string }> }> };
    const card = record.actions.find((a) => a.action === 'payByCard');
    expect(card?.applied.map((a) => a.summary)).toContainEqual(expect.stringContaining('passes the derived Adyen idempotency key to payments'));
    expect(card?.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining('those calls still send Adyen no idempotency key'));
    expect(record.actions.find((a) => a.action === 'payWithPaypal')?.applied.map((a) => a.summary)).toContainEqual(expect.stringContaining('as the PayPal-Request-Id header of paypal v2/checkout/orders'));
    expect(await compile(copy.dir)).toBe('');

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(again.manual.map((m) => m.reason).some((r) => r.includes('not made inside the route handler'))).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it('sends PayPal the derived PayPal-Request-Id with a context, and no header without one, as before apply', async () => {
    const paypal = await fakePaypal();
    process.env['PAYPAL_API_BASE'] = paypal.base;
    try {
      const { openPaypalOrder } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/services/payments.js')).href)) as { openPaypalOrder: (amount: string, context?: object) => Promise<string> };
      const { paypalRequestId } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/idempotency/providers.js')).href)) as { paypalRequestId: (context: object) => string };
      const context = { scope: 'user-1', key: 'pay-19', action: 'payWithPaypal' };
      await openPaypalOrder('12.00', context);
      await openPaypalOrder('12.00', context);
      await openPaypalOrder('12.00');
      expect(paypal.ids[0]).toBe(paypalRequestId(context));
      expect(paypal.ids[1]).toBe(paypal.ids[0]);
      expect(paypal.ids[2]).toBeUndefined();
    } finally {
      await paypal.close();
    }
  });
});
