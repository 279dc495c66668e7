import { createHmac } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const APP_DDL = `
CREATE TABLE adyen_payments (id serial PRIMARY KEY, psp_reference text NOT NULL, via text NOT NULL);
CREATE TABLE paypal_captures (id serial PRIMARY KEY, capture_id text NOT NULL, via text NOT NULL)`;

const NEXT_ADYEN = 'src/app/api/webhooks/adyen/route.ts';
const NEXT_PAYPAL = 'src/app/api/webhooks/paypal/route.ts';
const nextTarget = (name: 'adyen' | 'paypal', file: string, line: number): WiringTarget => ({ action: `${name}Webhook`, codeName: `${name}Webhook`, trigger: 'webhook', method: 'POST', path: `/api/webhooks/${name}`, file, line, provider: name, scope: 'global' });
const nextOptions: WireSourceOptions = { framework: 'nextjs', scaffoldDir: 'src/idempotency', imports: { aliases: [], defaultExtension: '.js' }, scaffoldModules: new Set(['index', 'instance', 'webhooks/webhooks', 'webhooks/verify', 'webhookEvent']) };

/** An Adyen standard notification with one item, signed as Adyen signs it (base64 HMAC-SHA256 of the item's fields). */
function adyenNotification(pspReference: string, key = HMAC_KEY): string {
  const fields = { pspReference, originalReference: '', merchantAccountCode: 'FixtureMerchant', merchantReference: `order-${pspReference}`, amount: { value: 1000, currency: 'EUR' }, eventCode: 'AUTHORISATION', success: 'true' };
  const signed = [fields.pspReference, fields.originalReference, fields.merchantAccountCode, fields.merchantReference, fields.amount.value, fields.amount.currency, fields.eventCode, fields.success].join(':');
  const hmacSignature = createHmac('sha256', Buffer.from(key, 'hex')).update(signed, 'utf8').digest('base64');
  return JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: { ...fields, eventDate: '2026-01-15T10:00:00+01:00', additionalData: { hmacSignature } } }] });
}

const paypalCapture = (id: string) => JSON.stringify({ id, event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: { id: `CAPTURE-${id}` }, create_time: '2026-01-15T10:00:00Z' });
const PAYPAL_HEADERS = { 'paypal-transmission-id': 'b2a8f0e0-1', 'paypal-transmission-sig': 'signed-by-paypal' };

/** Stands in for PayPal's verify-webhook-signature API, which the app calls over HTTP as in production. */
async function fakePaypalApi(): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const sent = JSON.parse(body) as { transmission_sig?: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ verification_status: sent.transmission_sig === 'signed-by-paypal' ? 'SUCCESS' : 'FAILURE' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** 200: applied, or a duplicate of it; 409 only when the first delivery still ran (the provider resends later). */
const ANSWERED = new Set([200, 409]);

/**
 * Issue #19 for Adyen and PayPal beyond Express: Fastify routes (apply's own run on the app) and Next.js App Router
 * route handlers (the same transform through wireSource) that verify the delivery themselves get the event handling
 * wrapped in onceForEvent after the check; the app type-checks, a second apply changes nothing, and against real
 * PostgreSQL a forged delivery is refused and 50 deliveries of one notification at once are applied once per route.
 */
describe.skipIf(skip !== undefined)('apply on Adyen and PayPal webhooks in Fastify routes and Next.js route handlers', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('adyen-paypal-frameworks');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('wraps the handling after each check, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.manual).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', 'src/webhooks.ts']);
    const fastify = await read('src/webhooks.ts');
    expect(fastify.indexOf('validator.validateHMAC(item, adyenHmacKey)')).toBeLessThan(fastify.indexOf("onceForEvent(ACTIONS.adyenWebhook, 'adyen', adyenEventOf(item), async () => {"));
    expect(fastify.indexOf('verifyPaypalWebhook(request.headers, raw)')).toBeLessThan(fastify.indexOf("onceForEvent(ACTIONS.paypalWebhook, 'paypal', paypalEventOf(event), async () => {"));
    expect(fastify).toContain('        return reply.code(answered.status).headers(answered.headers).send(answered.body);');

    for (const [name, file, line] of [['adyen', NEXT_ADYEN, 7], ['paypal', NEXT_PAYPAL, 5]] as const) {
      const target = nextTarget(name, file, line);
      const wired = wireSource(file, await read(file), [target], nextOptions);
      expect(wired.manual).toEqual([]);
      expect(wired.edits.map((e) => e.summary)).toEqual([expect.stringContaining(`${name === 'adyen' ? 'Adyen' : 'PayPal'} event handling of the POST route handler`)]);
      expect(wired.text).toContain(`onceForEvent(ACTIONS.${name}Webhook, '${name}', ${name}EventOf(${name === 'adyen' ? 'item' : 'event'}), async () => {`);
      expect(wired.text).toContain("from '../../../../idempotency/webhooks/verify.js';");
      expect(wireSource(file, wired.text, [target], { ...nextOptions, anyLine: true }).text).toBe(wired.text);
      await writeFile(path.join(copy.dir, file), wired.text);
    }

    expect(await compile(copy.dir)).toBe('');
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
  }, 300_000);

  it('refuses forged deliveries and applies a notification delivered 50 times at once once on each route', async () => {
    schema = await createAppSchema('wt_byname_adyen_paypal', copy.migration, APP_DDL);
    const paypalApi = await fakePaypalApi();
    Object.assign(process.env, { DATABASE_URL: schema.url, ADYEN_HMAC_KEY: HMAC_KEY, PAYPAL_API_BASE: paypalApi.base });
    const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
    const { buildWebhookApp } = await load<{ buildWebhookApp: (adyenHmacKey: string) => FastifyInstance }>('webhooks.js');
    const nextAdyen = await load<{ POST: (request: Request) => Promise<Response> }>('app/api/webhooks/adyen/route.js');
    const nextPaypal = await load<{ POST: (request: Request) => Promise<Response> }>('app/api/webhooks/paypal/route.js');
    const { db } = await load<{ db: Pool }>('db.js');
    const count = async (table: string, via: string) => (await schema!.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE via = $1`, [via])).rows[0].n as number;
    const app = buildWebhookApp(HMAC_KEY);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const init = (body: string, headers: Record<string, string> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const deliver = {
      fastify: (route: string, body: string, headers?: Record<string, string>) => fetch(`${address}${route}`, init(body, headers)).then((r) => r.status),
      next: (route: 'adyen' | 'paypal', body: string, headers?: Record<string, string>) => (route === 'adyen' ? nextAdyen : nextPaypal).POST(new Request(`http://localhost/api/webhooks/${route}`, init(body, headers))).then((r) => r.status),
    };
    const fifty = (send: () => Promise<number>) => Promise.all(Array.from({ length: 50 }, send));
    try {
      // Forged: a wrong HMAC key, a signature PayPal does not vouch for. Refused before anything is claimed or applied.
      expect(await deliver.fastify('/webhooks/adyen', adyenNotification('8535296650150001', HMAC_KEY.replace(/^44/, '55')))).toBe(401);
      expect(await deliver.next('adyen', adyenNotification('8535296650150002', HMAC_KEY.replace(/^44/, '55')))).toBe(401);
      expect(await deliver.fastify('/webhooks/paypal', paypalCapture('WH-F0'), { ...PAYPAL_HEADERS, 'paypal-transmission-sig': 'forged' })).toBe(400);
      expect(await deliver.next('paypal', paypalCapture('WH-N0'), { ...PAYPAL_HEADERS, 'paypal-transmission-sig': 'forged' })).toBe(400);

      const adyenFastify = adyenNotification('8535296650151001');
      const adyenNext = adyenNotification('8535296650151002');
      const bursts = await Promise.all([
        fifty(() => deliver.fastify('/webhooks/adyen', adyenFastify)),
        fifty(() => deliver.next('adyen', adyenNext)),
        fifty(() => deliver.fastify('/webhooks/paypal', paypalCapture('WH-F1'), PAYPAL_HEADERS)),
        fifty(() => deliver.next('paypal', paypalCapture('WH-N1'), PAYPAL_HEADERS)),
      ]);
      for (const statuses of bursts) {
        expect(statuses.every((s) => ANSWERED.has(s)), statuses.join(',')).toBe(true);
        expect(statuses).toContain(200);
      }
      // A resend after the burst is answered 200 and applies nothing more.
      expect(await deliver.fastify('/webhooks/adyen', adyenFastify)).toBe(200);
      expect(await deliver.next('adyen', adyenNext)).toBe(200);
      expect(await deliver.fastify('/webhooks/paypal', paypalCapture('WH-F1'), PAYPAL_HEADERS)).toBe(200);
      expect(await deliver.next('paypal', paypalCapture('WH-N1'), PAYPAL_HEADERS)).toBe(200);
      expect([await count('adyen_payments', 'fastify'), await count('adyen_payments', 'next'), await count('paypal_captures', 'fastify'), await count('paypal_captures', 'next')]).toEqual([1, 1, 1, 1]);
    } finally {
      await app.close();
      await db.end();
      await paypalApi.close();
    }
  }, 120_000);
});
