import { describe, expect, it } from 'vitest';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { modelFor } from '../generateInto.js';

const fileOf = (files: ReturnType<typeof generateScaffold>, name: string) => files.find((file) => file.path === `src/idempotency/${name}`)?.contents ?? '';

/**
 * boxyhq/saas-starter-kit: a directory-sync webhook from a sender the tool does not know, beside Stripe's, both Pages
 * API routes of a Next.js app.
 */
describe('a webhook from a sender the tool does not know', () => {
  const unknownSender = (stripeToo: boolean) =>
    modelFor('express-stripe-payments', (raw) => {
      const actions = raw.actions as Array<Record<string, unknown>>;
      raw.actions = [
        ...(stripeToo ? actions.filter((action) => action.trigger === 'webhook').map((action) => ({ ...action, source: 'pages/api/webhooks/stripe.ts:35' })) : []),
        { name: 'handleDsyncWebhook', trigger: 'webhook', route: 'POST /api/webhooks/dsync', significantFields: ['event', 'tenant'], key: { source: 'derived', from: ['event.id'] }, source: 'pages/api/webhooks/dsync.ts:8' },
      ];
      (raw.stack as Record<string, unknown>).framework = 'nextjs';
    });

  it('is shown with the generic HMAC source keyed by its configured field, and the design says what to check', async () => {
    const model = await unknownSender(false);
    const triggers = fileOf(generateScaffold(model, { dir: 'src/idempotency' }), 'TRIGGERS.md');
    expect(triggers).toContain('source: genericHmacSource({');
    expect(triggers).toContain("eventId: { path: 'event.id' }");
    expect(triggers).not.toContain('stripeSource(');
    // A Pages API route is told how a Pages route feeds the processor, not given the App Router's export.
    expect(triggers).toContain('is a Pages API route: turn its body parser off');
    expect(triggers).not.toContain('export const POST = nextWebhook(');
    expect(model.assumptions).toContainEqual(expect.stringMatching(/^handleDsyncWebhook: the tool does not know its sender, so the event id its deliveries are keyed by is assumed to be `event\.id` in the body/));
  });

  it("gives way to a provider's webhook for the example when the design has one", async () => {
    const model = await unknownSender(true);
    const triggers = fileOf(generateScaffold(model, { dir: 'src/idempotency' }), 'TRIGGERS.md');
    expect(triggers).toContain('source: stripeSource(process.env.STRIPE_WEBHOOK_SECRET!)');
    expect(model.assumptions.filter((text) => text.includes('the tool does not know its sender'))).toHaveLength(1);
  });
});
