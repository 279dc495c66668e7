import type Koa from 'koa';
import { expect } from 'vitest';
import { webhookFixtureSuite } from './fixtureApp.js';

const ROUTES = 'src/routes/webhooks.ts';
const WEBHOOK = 'src/webhooks/stripe.ts';

/**
 * Issue #19 on Koa: a @koa/router webhook route whose handler is the default export of another module, re-exported
 * through an index (`export { default } from './stripe.js'`): its event handling is wrapped in onceForEvent where it
 * is declared, answering through ctx.
 */
await webhookFixtureSuite({
  fixture: 'koa-webhook',
  title: 'apply on a Koa app whose Stripe webhook handler is a re-exported default export',
  changed: ['src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', WEBHOOK],
  async wrote(_first, read) {
    expect(await read(WEBHOOK)).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    if (event.type === 'payment_intent.succeeded') {
      await db.query('INSERT INTO fulfilments (intent) VALUES ($1)', [event.data.object.id]);
    }
  });
  if (answered) {
    ctx.status = answered.status;
    ctx.set(answered.headers);
    ctx.body = answered.body;
    return;
  }
  ctx.body = { received: true };`);
    expect(await read(ROUTES)).toContain("webhooksRouter.post('/webhooks/stripe', handleStripeEvent);");
  },
  schema: 'koa_webhook',
  eventId: 'evt_koa_1',
  serve: async (createApp) => {
    const server = (createApp() as Koa).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return server;
  },
});
