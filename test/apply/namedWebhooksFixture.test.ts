import type { Express } from 'express';
import { expect } from 'vitest';
import { webhookFixtureSuite } from './fixtureApp.js';

const APP = 'src/app.ts';
const WEBHOOK = 'src/webhooks/stripe.webhook.ts';
const PAYMENTS = 'src/controllers/payments.controller.ts';
const REFUNDS = 'src/controllers/refunds.controller.ts';

/**
 * Issue #19: an Express app whose routes name handlers reached through an index's re-export under another name
 * (`export { handleStripeEvent as stripeWebhook } from`), `export * from` and `export default`: the Stripe webhook's
 * event handling is wrapped in onceForEvent where the handler is declared, and the payment and refund calls are keyed
 * there.
 */
await webhookFixtureSuite({
  fixture: 'named-webhooks',
  title: 'apply on an Express app whose webhook and payment handlers are re-exported by name',
  changed: [APP, REFUNDS, PAYMENTS, 'src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', WEBHOOK],
  // Both HTTP handlers read req.user: authenticated; the webhook was followed. Only the callers' side is left.
  otherSteps: (step) => step.reason.startsWith('callers must now send an Idempotency-Key'),
  async wrote(first, read) {
    const webhook = await read(WEBHOOK);
    expect(webhook).toContain("import { ACTIONS } from '../idempotency/index.js';\nimport { onceForEvent } from '../idempotency/webhookEvent.js';\n");
    expect(webhook).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    if (event.type === 'payment_intent.succeeded') {
      await db.query('INSERT INTO fulfilments (intent) VALUES ($1)', [event.data.object.id]);
    }
  });
  if (answered) {
    res.status(answered.status).set(answered.headers).send(answered.body);
    return;
  }
  res.json({ received: true });`);
    expect(first.edits.filter((e) => e.summary.startsWith('follows the')).map((e) => e.file).sort()).toEqual([REFUNDS, PAYMENTS, WEBHOOK].sort());

    // The webhook route keeps its raw body and gets no request middleware; the payment routes get theirs.
    const app = await read(APP);
    expect(app).toContain("app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), stripeWebhook);");
    expect(app).toContain("app.post('/payments', idempotency.createPayment, createPayment);");
    expect(app).toContain("app.post('/refunds', idempotency.createRefund, refundPayment);");
    expect(await read(PAYMENTS)).toContain('stripe.paymentIntents.create({ amount, currency }, stripeRequestOptions(idempotencyContext));');
    expect(await read(REFUNDS)).toContain('const refundPayment = async (req: Request, res: Response): Promise<void> => {\n  const idempotencyContext = idempotencyOf(req);\n');
    expect(await read('src/idempotency/instance.ts')).toContain('.user?.id');
  },
  schema: 'wt_webhookbyname',
  eventId: 'evt_named_1',
  serve: async (createApp) => {
    const server = (createApp() as Express).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return server;
  },
});
