import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { expect } from 'vitest';
import { webhookFixtureSuite } from './fixtureApp.js';

const APP = 'src/app.ts';

/**
 * Issue #19 on Hono: an inline Stripe webhook route whose whole body is one try/catch (the catch answers a bad
 * signature 400): the event handling is wrapped in onceForEvent inside the try, right after the signature check,
 * answering with a Response; the catch stays as it was.
 */
await webhookFixtureSuite({
  fixture: 'hono-webhook',
  title: 'apply on a Hono app whose Stripe webhook route verifies the signature inside a try/catch',
  changed: [APP, 'src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts'],
  async wrote(first, read) {
    const app = await read(APP);
    expect(app).toContain(`    try {
      const event = stripe.webhooks.constructEvent(await c.req.text(), c.req.header('stripe-signature') ?? '', process.env['STRIPE_WEBHOOK_SECRET'] ?? '');
      const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
        if (event.type === 'payment_intent.succeeded') {
          await db.query('INSERT INTO fulfilments (intent) VALUES ($1)', [event.data.object.id]);
        }
      });
      if (answered) {
        return new Response(answered.body, { status: answered.status, headers: answered.headers });
      }
      return c.json({ received: true });
    } catch (error) {
      return c.text(\`Webhook Error: \${error instanceof Error ? error.message : String(error)}\`, 400);
    }`);
    // Keyed by the event id, never by a request middleware: Stripe sends no Idempotency-Key.
    expect(app).toContain("app.post('/webhooks/stripe', async (c) => {");
    expect(first.edits.map((e) => e.summary)).toContain('runs the Stripe event handling of POST /webhooks/stripe once per event id (onceForEvent), after the signature check');
  },
  schema: 'hono_webhook_apply19',
  eventId: 'evt_hono_1',
  serve: async (createApp) => {
    const server = serve({ fetch: (createApp() as Hono).fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise((resolve) => server.once('listening', resolve));
    return server;
  },
});
