import { webhookAcknowledgedBeforeProcessing } from '../../../src/findings/rules/webhook-acknowledged-before-processing.js';
import { blindEventUpsert } from '../../../src/findings/rules/blind-event-upsert.js';
import { webhookDedupeBeforeVerification } from '../../../src/findings/rules/webhook-dedupe-before-verification.js';
import { webhookRejectsUnhandledEvents } from '../../../src/findings/rules/webhook-rejects-unhandled-events.js';
import { webhookWithoutEventDedupe } from '../../../src/findings/rules/webhook-without-event-dedupe.js';
import { describe, expect, it } from 'vitest';
import { runRules } from '../../../src/findings/runRules.js';
import { configWith, contextFor, ruleTester } from '../ruleTester.js';

const nextWebhook = (body: string, fallback = 'return new Response(null, { status: 200 });') => `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export async function POST(req: Request) {
  const sig = req.headers.get('stripe-signature')!;
  const event = stripe.webhooks.constructEvent(await req.text(), sig, process.env.STRIPE_WEBHOOK_SECRET!);
${body}
  switch (event.type) {
    case 'customer.subscription.updated':
      await applySubscription(event.data.object as Stripe.Subscription);
      break;
    default:
      ${fallback}
  }
  return new Response(null, { status: 200 });
}
declare function applySubscription(s: Stripe.Subscription): Promise<void>;
`;

const recordEvent = `  const fresh = await db.query('INSERT INTO stripe_events (id) VALUES ($1) ON CONFLICT DO NOTHING', [event.id]);
  if (fresh.rowCount === 0) return new Response(null, { status: 200 });
declare const db: any;`;

/** The typical shape: a fresh row id beside the event id, the conflict clause decides which one is the key. */
const freshClaim = (conflict: string) => `  const fresh = await db.query('INSERT INTO processed_events (id, event_id) VALUES ($1, $2) ${conflict}', [randomUUID(), event.id]);
  if (fresh.rowCount === 0) return new Response(null, { status: 200 });
declare const db: any; declare function randomUUID(): string;`;

ruleTester(webhookWithoutEventDedupe, {
  valid: [
    { name: 'event id recorded with a unique insert', files: { 'app/api/webhooks/route.ts': nextWebhook(recordEvent) } },
    // The conflict target is the event id: the fresh row id beside it does not matter.
    { name: 'event id is the conflict target, the row id is fresh', files: { 'app/api/webhooks/route.ts': nextWebhook(freshClaim('ON CONFLICT (event_id) DO NOTHING')) } },
    // No target: any unique column may reject the row, and event.id is among the values.
    { name: 'no conflict target, event id among the values', files: { 'app/api/webhooks/route.ts': nextWebhook(freshClaim('ON CONFLICT DO NOTHING')) } },
    {
      name: 'event id passed to a helper that records it',
      files: { 'app/api/webhooks/route.ts': nextWebhook('  if (!(await claimOnce(event.id))) return new Response(null, { status: 200 });\ndeclare function claimOnce(id: string): Promise<boolean>;') },
    },
  ],
  invalid: [
    { name: 'every delivery is applied', files: { 'app/api/webhooks/route.ts': nextWebhook('') }, errors: [{ line: 5, message: /never records `event\.id`/ }] },
    {
      name: 'the event store is claimed on a fresh row id, so a redelivery inserts a second row',
      files: { 'app/api/webhooks/route.ts': nextWebhook(freshClaim('ON CONFLICT (id) DO NOTHING')) },
      errors: [{ line: 5, message: /never records `event\.id`: a redelivered event is applied again\. The ON CONFLICT at app\/api\/webhooks\/route\.ts:6 is keyed on `randomUUID\(\)`, made fresh per delivery, so a redelivery inserts again\.$/ }],
    },
    {
      name: 'through a const of the handler, the same',
      files: { 'app/api/webhooks/route.ts': nextWebhook(`  const rowId = randomUUID();\n${freshClaim('ON CONFLICT (id) DO NOTHING').replace('[randomUUID(), event.id]', '[rowId, event.id]')}`) },
      errors: [{ line: 5, message: /The ON CONFLICT at app\/api\/webhooks\/route\.ts:7 is keyed on `randomUUID\(\)`/ }],
    },
    {
      // cgarrovillo/ecommerce@30efd95: a Koa middleware verifies and hands the event on in ctx.state.stripeEvent, a name
      // that is no event store.
      name: 'the verified event kept in ctx.state.stripeEvent',
      files: {
        'src/verifyStripeSign.ts': `import Stripe from 'stripe';
const stripe = new Stripe('sk');
export const verifyStripeSignature = (ctx: any, next: () => void) => {
  const event = stripe.webhooks.constructEvent(ctx.request.rawBody, ctx.request.headers['stripe-signature'], 'whsec');
  ctx.state.stripeEvent = event;
  next();
};
`,
      },
      errors: [{ line: 4, message: /never records `event\.id`/ }],
    },
    { name: 'logging the id is not remembering it', files: { 'app/api/webhooks/route.ts': nextWebhook('  console.log(`received ${event.id}`);') }, errors: [{ line: 5 }] },
  ],
});

ruleTester(webhookDedupeBeforeVerification, {
  valid: [
    {
      name: 'verify, then dedupe on the verified id',
      files: {
        'src/webhook.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
export async function handle(req: any, res: any) {
  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'], 'whsec');
  if (await redis.set(\`evt:\${event.id}\`, '1', 'NX')) res.sendStatus(200);
}
declare const redis: any;
`,
      },
    },
  ],
  invalid: [
    {
      name: 'dedupe on the unverified body id',
      files: {
        'src/webhook.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
export async function handle(req: any, res: any) {
  const payload = JSON.parse(req.body.toString());
  if (await redis.sismember('seen', payload.id)) return res.sendStatus(200);
  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'], 'whsec');
  res.json({ received: event.id });
}
declare const redis: any;
`,
      },
      errors: [{ line: 5, message: /before the signature check on line 6/ }],
    },
  ],
});

ruleTester(webhookRejectsUnhandledEvents, {
  valid: [
    { name: 'unknown types acknowledged', files: { 'app/api/webhooks/route.ts': nextWebhook(recordEvent) } },
    {
      name: 'unknown types logged and acknowledged',
      files: { 'app/api/webhooks/route.ts': nextWebhook('', "console.warn('unhandled', event.type);") },
    },
    {
      name: 'throw caught and acknowledged',
      files: {
        'app/api/webhooks/route.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  try {
    switch (event.type) {
      case 'invoice.paid': break;
      default: throw new Error('unhandled');
    }
  } catch (error) {
    console.warn(error);
  }
  return new Response('ok');
}
`,
      },
    },
  ],
  invalid: [
    {
      name: 'default answers 400',
      files: { 'app/api/webhooks/route.ts': nextWebhook('', "return new Response('Unsupported event type', { status: 400 });") },
      errors: [{ line: 12, message: /400/ }],
    },
    {
      name: 'default throws (500)',
      files: { 'app/api/webhooks/route.ts': nextWebhook('', "throw new Error('Unhandled relevant event!');") },
      errors: [{ line: 12, message: /exception/ }],
    },
    {
      name: 'else branch of a relevant-events filter answers 400',
      files: {
        'app/api/webhooks/route.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
const relevant = new Set(['invoice.paid']);
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  if (relevant.has(event.type)) {
    await handle(event);
  } else {
    return new Response(\`Unsupported event type: \${event.type}\`, { status: 400 });
  }
  return new Response(JSON.stringify({ received: true }));
}
declare function handle(e: Stripe.Event): Promise<void>;
`,
      },
      errors: [{ line: 9, message: /relevant\.has\(event\.type\).*400/ }],
    },
  ],
});

const supabaseAdmin = (guard: string) => `import { supabase } from './client';
import type Stripe from 'stripe';
export async function upsertSubscriptionRecord(sub: Stripe.Subscription) {
  const { error } = await supabase
    .from('subscriptions')
    .upsert({ id: sub.id, status: sub.status, stripe_created: sub.created })${guard};
  if (error) throw error;
}
`;
const webhookCalling = `import Stripe from 'stripe';
import { upsertSubscriptionRecord } from '../lib/admin';
const stripe = new Stripe('k');
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  if (event.type === 'customer.subscription.updated') await upsertSubscriptionRecord(event.data.object as Stripe.Subscription);
  return new Response('ok');
}
`;

ruleTester(blindEventUpsert, {
  valid: [
    {
      name: 'update guarded by the stored event time',
      files: {
        'lib/admin.ts': `import { prisma } from './db';
import type Stripe from 'stripe';
export async function upsertSubscriptionRecord(sub: Stripe.Subscription, eventCreated: number) {
  await prisma.subscription.updateMany({ where: { id: sub.id, lastEventAt: { lt: eventCreated } }, data: { status: sub.status, lastEventAt: eventCreated } });
}
`,
        'app/api/webhooks/route.ts': webhookCalling,
      },
    },
    { name: 'writes not reached from an event handler', files: { 'lib/admin.ts': supabaseAdmin('') } },
    {
      name: 'upsert keyed on a fresh id overwrites nothing (each event adds a row)',
      files: { 'lib/admin.ts': supabaseAdmin('').replace('{ id: sub.id,', "{ id: crypto.randomUUID(), sub_id: sub.id,").replace('stripe_created: sub.created })', "stripe_created: sub.created }, { onConflict: 'id' })"), 'app/api/webhooks/route.ts': webhookCalling },
    },
  ],
  invalid: [
    {
      name: 'blind upsert called from the webhook',
      files: { 'lib/admin.ts': supabaseAdmin(''), 'app/api/webhooks/route.ts': webhookCalling },
      errors: [{ file: 'lib/admin.ts', line: 6, message: /upsert.*upsertSubscriptionRecord/ }],
    },
  ],
});

// The shape of Acosta-gh/Headless-E-commerce-Node.js-Express-Sequelize-React-Admin-shadcn-Store-daisyUI-Tailwind-MercadoPago@496a2fb
// (server/controllers/mercadopago.controller.js): a MercadoPago webhook answered before its payment is fetched and applied.
const mercadoRoute = `const express = require('express');\nconst controller = require('./controller');\nconst router = express.Router();\nrouter.post('/webhook', controller.receive_webhook);\nmodule.exports = router;\n`;
const mercadoController = (beforeWork: string, afterWork: string) => `exports.receive_webhook = async (req, res) => {
  const topic = req.body.type;
  ${beforeWork}
  if (topic === 'payment') {
    const payment = await fetchPayment(req.body.data.id);
    await markPaid(payment.external_reference);
  }
  ${afterWork}
};
async function fetchPayment(id) { return { external_reference: id }; }
async function markPaid(id) { return id; }
`;
const mercadoWebhook = { findings: [{ kind: 'webhook' as const, id: 'webhook POST /webhook', file: 'src/routes.js', line: 4, verifiesSignature: false, dedupesEventId: false, route: 'POST /webhook' }] };

ruleTester(webhookAcknowledgedBeforeProcessing, {
  valid: [
    { name: 'answers after the handling', files: { 'src/routes.js': mercadoRoute, 'src/controller.js': mercadoController('', 'res.sendStatus(200);') }, inspection: mercadoWebhook },
    { name: 'an early 400 for a bad request is not an acknowledgement', files: { 'src/routes.js': mercadoRoute, 'src/controller.js': mercadoController("if (!topic) return res.sendStatus(400);\n  res.status(400);", 'res.json({ received: true });') }, inspection: mercadoWebhook },
  ],
  invalid: [
    {
      name: 'res.sendStatus(200) before the payment is fetched and applied',
      files: { 'src/routes.js': mercadoRoute, 'src/controller.js': mercadoController('res.sendStatus(200);', '') },
      inspection: mercadoWebhook,
      errors: [{ file: 'src/controller.js', line: 3, message: /^POST \/webhook: receive_webhook answers the provider with success here, before it handles the event/ }],
    },
    {
      name: 'audit alone (no inspection): the config\'s webhook action is read',
      files: { 'src/routes.js': mercadoRoute, 'src/controller.js': mercadoController('res.sendStatus(200);', '') },
      config: configWith([{ name: 'handleWebhook', trigger: 'webhook', route: 'POST /webhook', significantFields: ['id'], source: 'src/routes.js:4' }]),
      errors: [{ file: 'src/controller.js', line: 3, message: /^POST \/webhook: receive_webhook answers/ }],
    },
    {
      // cgarrovillo/ecommerce@30efd95 (api/src/controllers/v1/webhooks/session-complete.ts), a Koa handler on serverless.
      name: 'the work started and left running (a .then/.catch chain), the answer given at once',
      files: {
        'src/routes.ts': "import Router from '@koa/router';\nimport checkoutSessionCompleted from './session-complete';\nconst router = new Router({ prefix: '/v1' });\nrouter.post('/webhooks/checkout/complete', verifyStripeSignature, checkoutSessionCompleted);\ndeclare const verifyStripeSignature: any;\nexport default router;\n",
        'src/session-complete.ts': `import { Context } from 'koa';
const checkoutSessionCompleted = async (ctx: Context) => {
  const session = ctx.state.stripeEvent.data.object;
  processNewOrder(session)
    .then(() => {})
    .catch((err) => console.error(err));
  return (ctx.status = 200);
};
declare function processNewOrder(session: unknown): Promise<void>;
export default checkoutSessionCompleted;
`,
      },
      config: configWith([{ name: 'handleStripeWebhook', trigger: 'webhook', route: 'POST /v1/webhooks/checkout/complete', significantFields: ['id'], source: 'src/routes.ts:4' }]),
      errors: [{ file: 'src/session-complete.ts', line: 4, message: /checkoutSessionCompleted starts `processNewOrder\(session\)` without awaiting it, so the provider is answered with success while the event is still being handled/ }],
    },
    {
      name: 'res.status(202).json(…) first, as some providers advise, then the work in the same request',
      files: { 'src/routes.js': mercadoRoute, 'src/controller.js': mercadoController('res.status(202).json({ ok: true });', '') },
      inspection: mercadoWebhook,
      errors: [{ file: 'src/controller.js', line: 3 }],
    },
  ],
});

describe('the fix speaks of the store the project has', () => {
  const fixes = (dependencies: Record<string, string>) => runRules(contextFor({ name: 'store', files: { 'app/api/webhooks/route.ts': nextWebhook('') }, dependencies }), [webhookWithoutEventDedupe]).map((f) => f.fix);

  it('MongoDB alone (async-labs/saas@4b27b6a): a unique index and the duplicate-key error, no ON CONFLICT', () => {
    const [fix] = fixes({ stripe: '^14.8.0', mongoose: '^8.0.3' });
    expect(fix).toMatch(/collection with a unique index .* duplicate-key error \(code 11000\)/);
    expect(fix).not.toMatch(/ON CONFLICT/);
  });

  it('the config names MongoDB: pg, installed for the generated store, does not make it a SQL project', () => {
    const ctx = contextFor({ name: 'store', files: { 'app/api/webhooks/route.ts': nextWebhook('') }, dependencies: { stripe: '^14.8.0', mongoose: '^8.0.3', pg: '^8.11.0' } });
    const configured = { ...ctx, sources: ctx.sources.map((source) => ({ ...source, database: 'mongodb' })) };
    expect(runRules(configured, [webhookWithoutEventDedupe])[0]?.fix).toMatch(/duplicate-key error \(code 11000\)/);
  });

  it('a SQL library beside Mongoose keeps the table fix', () => {
    expect(fixes({ stripe: '^14.8.0', mongoose: '^8.0.3', pg: '^8.11.0' })[0]).toMatch(/ON CONFLICT DO NOTHING/);
  });
});
