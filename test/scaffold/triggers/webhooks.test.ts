import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hmacValidator } from '@adyen/api-library';
import express from 'express';
import Fastify from 'fastify';
import type pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Generated } from '../generateInto.js';
import { createSchema, listen, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

/**
 * Issue #18's webhook acceptance: signed fixtures (signed by the providers' own SDKs, so our node:crypto checks are
 * proven compatible), concurrent duplicate deliveries over HTTP executing once with every delivery answered 2xx,
 * and signature failures rejected before anything is claimed.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`webhook acceptance skipped: ${skip}`);

const SECRET = 'whsec_acceptance';
const stripe = new Stripe('sk_test_unused');

function stripeDelivery(event: Record<string, unknown>, secret = SECRET) {
  const payload = JSON.stringify(event);
  return { body: payload, signature: stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

const paymentSucceeded = (id: string, object = 'pi_1', created = 1_700_000_000) => ({
  id,
  object: 'event',
  type: 'payment_intent.succeeded',
  created,
  pending_webhooks: 1,
  data: { object: { id: object, object: 'payment_intent', amount: 4999 } },
});

describe.skipIf(skip !== undefined)('webhooks over HTTP, signed by the providers\' SDKs', () => {
  let generated: Generated;
  let schema: Schema;
  let webhooks: Record<string, Loose>;
  let verify: Record<string, Loose>;
  let core: Loose;
  let action: Loose;

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await triggersModel());
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'webhooks');
    await schema.pool.query('CREATE TABLE effects (event_id text NOT NULL)');
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    const index = await load('index.js');
    webhooks = { ...(await load('webhooks/webhooks.js')), ...(await load('webhooks/express.js')), ...(await load('webhooks/fastify.js')) };
    verify = await load('webhooks/verify.js');
    core = index.createIdempotency({ pool: schema.pool, principal: () => 'global' }).core;
    action = index.ACTIONS.handleStripeWebhook;
  });

  afterAll(async () => {
    await schema?.drop();
  });

  const effects = async (id: string) => Number((await schema.pool.query('SELECT count(*)::int AS n FROM effects WHERE event_id = $1', [id])).rows[0].n);

  function stripeProcessor(hooks: { started?: () => void; gate?: Promise<void> } = {}) {
    return webhooks.createWebhookProcessor({
      core,
      action,
      source: verify.stripeSource(SECRET),
      handles: (type: string) => type.startsWith('payment_intent.'),
      handle: async (event: { id: string }, context: { db?: pg.PoolClient }) => {
        hooks.started?.();
        await hooks.gate;
        await (context.db ?? schema.pool).query('INSERT INTO effects (event_id) VALUES ($1)', [event.id]);
      },
    });
  }

  it('Express: eight concurrent deliveries of one Stripe event run it once and all get 2xx; a resend later is 2xx too', async () => {
    let release = () => {};
    let started = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = new Promise<void>((resolve) => (started = resolve));
    const app = express();
    app.post('/webhooks/stripe', ...webhooks.expressWebhook(stripeProcessor({ started, gate })));
    // A global JSON parser after the webhook route must not matter: the route already has the raw bytes.
    app.use(express.json());
    const server = await listen(app);
    try {
      const { body, signature } = stripeDelivery(paymentSucceeded('evt_http_dup'));
      const send = () => fetch(`${server.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
      const pending = Array.from({ length: 8 }, send);
      await running;
      release();
      const statuses = (await Promise.all(pending)).map((response) => response.status);
      expect(statuses).toEqual(Array(8).fill(200));
      expect(await effects('evt_http_dup')).toBe(1);
      const resend = await send();
      expect(resend.status).toBe(200);
      expect(resend.headers.get('idempotent-replayed')).toBe('true');
      expect(await effects('evt_http_dup')).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('Express: a forged or tampered delivery is 400 and leaves no record; the event key is the event id, not a header', async () => {
    const app = express();
    app.post('/webhooks/stripe', ...webhooks.expressWebhook(stripeProcessor()));
    const server = await listen(app);
    try {
      const forged = stripeDelivery(paymentSucceeded('evt_forged'), 'whsec_attacker');
      const tampered = stripeDelivery(paymentSucceeded('evt_tampered'));
      const post = (body: string, signature: string) =>
        fetch(`${server.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'idempotency-key': 'ignored' }, body });
      expect((await post(forged.body, forged.signature)).status).toBe(400);
      expect((await post(tampered.body.replace('4999', '1'), tampered.signature)).status).toBe(400);
      const good = stripeDelivery(paymentSucceeded('evt_keyed'));
      expect((await post(good.body, good.signature)).status).toBe(200);
      const { rows } = await schema.pool.query("SELECT key FROM idempotency_store WHERE key LIKE 'stripe:evt_%' ORDER BY key");
      expect(rows.map((row: { key: string }) => row.key)).toEqual(['stripe:evt_http_dup', 'stripe:evt_keyed']);
    } finally {
      await server.close();
    }
  });

  it('Fastify: the raw-body route dedupes a resend, and the rest of the app keeps JSON parsing', async () => {
    const app = Fastify();
    await app.register(webhooks.fastifyWebhook('/webhooks/stripe', stripeProcessor()));
    app.post('/echo', async (request) => request.body);
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const address = app.server.address() as { port: number };
      const { body, signature } = stripeDelivery(paymentSucceeded('evt_fastify'));
      const send = () => fetch(`http://127.0.0.1:${address.port}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
      expect((await send()).status).toBe(200);
      expect((await send()).status).toBe(200);
      expect(await effects('evt_fastify')).toBe(1);
      const echo = await fetch(`http://127.0.0.1:${address.port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(await echo.json()).toEqual({ a: 1 });
    } finally {
      await app.close();
    }
  });

  it('Adyen: items signed with the Adyen library verify; key is pspReference:eventCode:success; the body is [accepted]', async () => {
    const key = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
    const item = {
      pspReference: `PSP${randomUUID().slice(0, 8)}`,
      originalReference: '',
      merchantAccountCode: 'TestMerchant',
      merchantReference: 'order-1',
      amount: { value: 4999, currency: 'EUR' },
      eventCode: 'AUTHORISATION',
      success: 'true',
      eventDate: '2026-01-15T10:00:00+01:00',
      additionalData: {} as Record<string, string>,
    };
    item.additionalData.hmacSignature = new hmacValidator().calculateHmac(item as never, key);
    const processAdyen = webhooks.createWebhookProcessor({
      core,
      action,
      source: verify.adyenSource(key),
      handle: async (event: { pspReference: string }) => void (await schema.pool.query('INSERT INTO effects (event_id) VALUES ($1)', [event.pspReference])),
    });
    const rawBody = Buffer.from(JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }));
    const first = await processAdyen({ rawBody, headers: {} });
    expect(first).toMatchObject({ status: 200, body: '[accepted]' });
    expect((await processAdyen({ rawBody, headers: {} })).status).toBe(200);
    expect(await effects(item.pspReference)).toBe(1);
    const tampered = Buffer.from(rawBody.toString().replace('4999', '5999'));
    expect((await processAdyen({ rawBody: tampered, headers: {} })).status).toBe(400);
  });

  it('GitHub: X-Hub-Signature-256 verified, keyed by X-GitHub-Delivery', async () => {
    const secret = 'gh-secret';
    const processGithub = webhooks.createWebhookProcessor({
      core,
      action,
      source: verify.githubSource(secret),
      handle: async (event: { delivery: string }) => void (await schema.pool.query('INSERT INTO effects (event_id) VALUES ($1)', [event.delivery])),
    });
    const rawBody = Buffer.from('{"action":"opened"}');
    const delivery = randomUUID();
    const headers = { 'x-github-delivery': delivery, 'x-github-event': 'pull_request', 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}` };
    expect((await processGithub({ rawBody, headers })).status).toBe(200);
    expect((await processGithub({ rawBody, headers })).status).toBe(200);
    expect(await effects(delivery)).toBe(1);
    expect((await processGithub({ rawBody, headers: { ...headers, 'x-hub-signature-256': 'sha256=00' } })).status).toBe(400);
  });

  it('our Stripe check agrees with stripe.webhooks.constructEvent on what is valid', () => {
    const { body, signature } = stripeDelivery(paymentSucceeded('evt_agree'));
    const ours = verify.verifyStripeSignature({ rawBody: Buffer.from(body), headers: { 'stripe-signature': signature } }, SECRET);
    expect(ours.id).toBe(stripe.webhooks.constructEvent(body, signature, SECRET).id);
    const stale = signature.replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`);
    expect(() => stripe.webhooks.constructEvent(body, stale, SECRET)).toThrow();
    expect(() => verify.verifyStripeSignature({ rawBody: Buffer.from(body), headers: { 'stripe-signature': stale } }, SECRET)).toThrow();
  });
});
