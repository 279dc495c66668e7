import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const APP_DDL = `
CREATE TABLE adyen_payments (id serial PRIMARY KEY, psp_reference text NOT NULL);
CREATE TABLE paypal_captures (id serial PRIMARY KEY, capture_id text NOT NULL)`;

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

/** An Adyen standard notification with one item, signed as Adyen signs it (base64 HMAC-SHA256 of the item's fields). */
function adyenNotification(item: { pspReference: string; eventCode: string; success: string; merchantReference: string; value: number }, key = HMAC_KEY): string {
  const fields = { pspReference: item.pspReference, originalReference: '', merchantAccountCode: 'FixtureMerchant', merchantReference: item.merchantReference, amount: { value: item.value, currency: 'EUR' }, eventCode: item.eventCode, success: item.success };
  const signed = [fields.pspReference, fields.originalReference, fields.merchantAccountCode, fields.merchantReference, fields.amount.value, fields.amount.currency, fields.eventCode, fields.success].join(':');
  const hmacSignature = createHmac('sha256', Buffer.from(key, 'hex')).update(signed, 'utf8').digest('base64');
  return JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: { ...fields, eventDate: '2026-01-15T10:00:00+01:00', additionalData: { hmacSignature } } }] });
}

/** Stands in for PayPal's verify-webhook-signature API, which the app calls in production (src/paypal.ts). */
const fakePaypalVerifier = async (headers: IncomingHttpHeaders) => headers['paypal-transmission-sig'] === 'signed-by-paypal' && typeof headers['paypal-transmission-id'] === 'string';

/**
 * Issue #19 for Adyen and PayPal webhooks: the fixture's Express routes (Adyen: validateHMAC per notification item;
 * PayPal: the app's own verify-webhook-signature call) after `apply --yes` type-check and a second apply changes
 * nothing; then, against real PostgreSQL, the same notification delivered twice, and twice at once, is applied once.
 */
describe.skipIf(skip !== undefined)('apply on the Adyen and PayPal webhook fixture', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('adyen-paypal-webhook');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('wraps the handling after each check, keyed by the provider event, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/app.ts', 'src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts']);
    const app = await readFile(path.join(copy.dir, 'src/app.ts'), 'utf8');
    expect(app).toContain("import { paypalEventOf, adyenEventOf } from './idempotency/webhooks/verify.js';");
    // The checks are untouched and still come first.
    expect(app.indexOf('validator.validateHMAC(item, options.adyenHmacKey)')).toBeLessThan(app.indexOf("onceForEvent(ACTIONS.adyenWebhook, 'adyen', adyenEventOf(item), async () => {"));
    expect(app.indexOf('options.verifyPaypalWebhook(req.headers')).toBeLessThan(app.indexOf("onceForEvent(ACTIONS.paypalWebhook, 'paypal', paypalEventOf(event), async () => {"));
    expect(await compile(copy.dir)).toBe('');

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/app.ts'), 'utf8')).toBe(app);
  }, 240_000);

  it('applies an Adyen or PayPal notification delivered twice, and twice at once, once', async () => {
    schema = await createAppSchema('wt_webhooks_adyen_paypal', copy.migration, APP_DDL);
    process.env['DATABASE_URL'] = schema.url;
    const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
    const { createWebhookApp } = await load<{ createWebhookApp: (options: { adyenHmacKey: string; verifyPaypalWebhook: typeof fakePaypalVerifier }) => Express }>('app.js');
    const { db } = await load<{ db: { end(): Promise<void> } }>('db.js');
    const count = async (table: string) => (await schema!.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    const server = createWebhookApp({ adyenHmacKey: HMAC_KEY, verifyPaypalWebhook: fakePaypalVerifier }).listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (route: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(async (r) => ({ status: r.status, body: await r.text() }));
    try {
      // Adyen: a forged item is refused and applies nothing.
      const authorised = { pspReference: '8535296650153317', eventCode: 'AUTHORISATION', success: 'true', merchantReference: 'order-11', value: 1000 };
      expect((await post('/webhooks/adyen', adyenNotification(authorised, HMAC_KEY.replace(/^44/, '55')))).status).toBe(401);
      expect(await count('adyen_payments')).toBe(0);
      // The same notification twice, then twice at once: applied once, and Adyen always gets its "[accepted]".
      const notification = adyenNotification(authorised);
      expect(await post('/webhooks/adyen', notification)).toEqual({ status: 200, body: '[accepted]' });
      expect(await post('/webhooks/adyen', notification)).toEqual({ status: 200, body: '[accepted]' });
      const concurrent = adyenNotification({ ...authorised, pspReference: '8535296650153318', merchantReference: 'order-12' });
      const both = await Promise.all([post('/webhooks/adyen', concurrent), post('/webhooks/adyen', concurrent)]);
      // 409: the other delivery was still running (Adyen resends later).
      expect(both.every((r) => r.status === 200 || r.status === 409), JSON.stringify(both)).toBe(true);
      expect(both.map((r) => r.status)).toContain(200);
      expect(await count('adyen_payments')).toBe(2);

      // PayPal: an unverified delivery is refused; a verified event delivered twice, then twice at once, is applied once.
      const headers = { 'paypal-transmission-id': 'b2a8f0e0-1', 'paypal-transmission-sig': 'signed-by-paypal' };
      const capture = (id: string) => JSON.stringify({ id, event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: { id: `CAPTURE-${id}` }, create_time: '2026-01-15T10:00:00Z' });
      expect((await post('/webhooks/paypal', capture('WH-1'), { ...headers, 'paypal-transmission-sig': 'forged' })).status).toBe(400);
      expect(await count('paypal_captures')).toBe(0);
      expect((await post('/webhooks/paypal', capture('WH-1'), headers)).status).toBe(200);
      expect((await post('/webhooks/paypal', capture('WH-1'), headers)).status).toBe(200);
      const twice = await Promise.all([post('/webhooks/paypal', capture('WH-2'), headers), post('/webhooks/paypal', capture('WH-2'), headers)]);
      expect(twice.every((r) => r.status === 200 || r.status === 409), JSON.stringify(twice)).toBe(true);
      expect(twice.map((r) => r.status)).toContain(200);
      expect(await count('paypal_captures')).toBe(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  }, 240_000);
});
