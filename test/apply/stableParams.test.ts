import { describe, expect, it } from 'vitest';
import { Node } from 'ts-morph';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import { parseSource } from '../../src/apply/sourceFile.js';
import { stabiliseProviderCalls } from '../../src/apply/transforms/stableParams.js';
import type { WiringTarget } from '../../src/apply/types.js';
import { perAttemptProviderKey } from '../../src/findings/rules/per-attempt-provider-key.js';
import { providerParamsChangeBetweenRetries } from '../../src/findings/rules/provider-params-change-between-retries.js';
import { readSchemaFacts } from '../../src/findings/schemaFacts.js';
import type { Rule } from '../../src/findings/types.js';
import { parseSource as parseForRules } from '../../src/inspect/parse/parseSource.js';

const options: WireSourceOptions = {
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', 'providers']),
};
const file = 'src/routes/payments.ts';
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'global', ...extra });
const style = { quote: 'single' as const, semicolons: true, specifier: (name: string) => `../idempotency/${name}.js` };

/** What a rule reports on a text: `line: message`, as `inspect` would list it. */
function findings(rule: Rule, text: string, rel = file): string[] {
  const sf = parseForRules(rel, text).sf;
  return (rule.checkFile?.({ rel, text, sf, schema: readSchemaFacts(new Map()), dependencies: new Map([['stripe', '*']]) }) ?? []).map((r) => `${sf.getLineAndCharacterOfPosition(r.node.getStart(sf)).line + 1}: ${r.message}`);
}

const expressRoute = `import { createHash, randomUUID } from 'node:crypto';
import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const now = Math.floor(Date.now() / 1000);
  const ref = \`web-\${randomUUID()}\`;
  const session = await stripe.checkout.sessions.create({ mode: 'payment', expires_at: now + 3600, client_reference_id: ref, description: \`Order at \${new Date().toISOString()}\`, metadata: { attempt: Math.random().toString(36).slice(2) } }, { idempotencyKey: randomUUID() });
  res.status(201).json({ session, hash: createHash('sha256').update('x').digest('hex') });
});
`;

describe('stable provider parameters (apply)', () => {
  it('Express: the per-attempt key becomes the derived key, labels derive from it, the business time counts from startedAt', () => {
    const out = wireSource(file, expressRoute, [target(8)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("}, stripeRequestOptions(idempotencyContext));");
    expect(out.text).not.toContain('idempotencyKey: randomUUID()');
    // A label held in a local: the value sent is derived, the local that only made it goes.
    expect(out.text).toContain('client_reference_id: providerKey(idempotencyContext)');
    expect(out.text).not.toContain('const ref');
    expect(out.text).toContain('description: `Order at ${providerKey(idempotencyContext)}`');
    expect(out.text).toContain('metadata: { attempt: providerKey(idempotencyContext) }');
    expect(out.text).toContain('expires_at: now + 3600');
    // The clock read in the local that only fed the expiry becomes the key's start time, the same on every attempt.
    expect(out.text).toContain('const now = Math.floor(idempotencyContext.startedAt / 1000);');
    // randomUUID has no use left; createHash, from the same import, stays.
    expect(out.text).toContain("import { createHash } from 'node:crypto';");
    expect(out.text).toContain("import { stripeRequestOptions, providerKey } from '../idempotency/providers.js';");
    expect(out.edits.map((e) => e.summary).join('\n')).toContain('replaces the per-attempt stripe checkout.sessions.create key `randomUUID()` with the derived key');
    expect(out.edits.map((e) => e.summary).join('\n')).toContain("takes stripe checkout.sessions.create parameter `expires_at` from the key's start time (startedAt) instead of `now`");
    // The rules, run on the edited text, see nothing left.
    expect(findings(perAttemptProviderKey, out.text)).toEqual([]);
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
    // A second run finds nothing to do.
    const again = wireSource(file, out.text, [target(8)], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('only clock reads inside provider parameters move to startedAt: other clock reads, shared locals and random times stay', () => {
    const source = `import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const receivedAt = new Date();
  const trialEnds = Math.floor(Date.now() / 1000) + 14 * 86400;
  await saveTrial(trialEnds);
  const subscription = await stripe.subscriptions.create({ customer: 'cus_1', items: [{ price: 'p' }], trial_end: trialEnds, billing_cycle_anchor: Math.floor(Date.now() / 1000) + Math.floor(Math.random() * 60), cancel_at: Math.floor(new Date().getTime() / 1000) + 365 * 86400 });
  res.status(201).json({ subscription, receivedAt, answeredAt: Date.now() });
});

declare function saveTrial(end: number): Promise<void>;
`;
    const out = wireSource(file, source, [target(7)], options);
    expect(out.stale).toEqual([]);
    // Only the parameter made of nothing but clock reads is rewritten.
    expect(out.text).toContain('cancel_at: Math.floor(new Date(idempotencyContext.startedAt).getTime() / 1000) + 365 * 86400 }');
    // A local the handler also stores elsewhere, and a time with a random part, are the user's to decide.
    expect(out.text).toContain('const trialEnds = Math.floor(Date.now() / 1000) + 14 * 86400;');
    expect(out.text).toContain('billing_cycle_anchor: Math.floor(Date.now() / 1000) + Math.floor(Math.random() * 60),');
    // Clock reads outside the provider call are not the provider's parameters: untouched.
    expect(out.text).toContain('const receivedAt = new Date();');
    expect(out.text).toContain('answeredAt: Date.now() });');
    const left = findings(providerParamsChangeBetweenRetries, out.text);
    expect(left.map((l) => /parameter `(\w+)`/.exec(l)?.[1])).toEqual(['trial_end', 'billing_cycle_anchor']);
    const again = wireSource(file, out.text, [target(7)], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('dayjs() and moment() without an argument are clock reads: found by the rule, started at startedAt by apply', () => {
    const source = `import { Router } from 'express';
import dayjs from 'dayjs';
import moment from 'moment';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const order = req.body as { createdAt: string };
  const session = await stripe.checkout.sessions.create({ mode: 'payment', expires_at: moment().add(30, 'minutes').unix(), after_expiration: { recovery: { enabled: true } }, payment_intent_data: { capture_method: 'manual' }, custom_text: { submit: { message: dayjs(order.createdAt).format() } }, subscription_data: { trial_end: dayjs().add(7, 'day').unix() } });
  res.status(201).json(session);
});
`;
    expect(findings(providerParamsChangeBetweenRetries, source).map((l) => /parameter `(\w+)`/.exec(l)?.[1])).toEqual(['expires_at', 'trial_end']);
    const out = wireSource(file, source, [target(9)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("expires_at: moment(idempotencyContext.startedAt).add(30, 'minutes').unix(),");
    // A clock read nested in a parameter object is one too; dayjs with an argument is not the clock and stays.
    expect(out.text).toContain("subscription_data: { trial_end: dayjs(idempotencyContext.startedAt).add(7, 'day').unix() }");
    expect(out.text).toContain('message: dayjs(order.createdAt).format()');
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
    expect(wireSource(file, out.text, [target(9)], { ...options, anyLine: true }).text).toBe(out.text);
  });

  it('removes a local and the import that only fed the key, and keeps other options', () => {
    const source = `import { randomUUID } from 'crypto';
import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const key = randomUUID();
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: key, timeout: 5000 });
  res.json(intent);
});
`;
    const out = wireSource(file, source, [target(8)], options);
    expect(out.text).toContain("{ idempotencyKey: stripeRequestOptions(idempotencyContext).idempotencyKey, timeout: 5000 }");
    expect(out.text).not.toContain('randomUUID');
    expect(out.text).not.toContain('const key');
    expect(out.text).toMatch(/^import \{ Router \} from 'express';/);
    expect(findings(perAttemptProviderKey, out.text)).toEqual([]);
  });

  it('a label that shares a local with other code, or sits in arithmetic, is left to the user', () => {
    const source = `import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const orderId = randomUUID();
  await saveOrder(orderId);
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', metadata: { orderId }, description: 'n' + (Date.now() % 7) * 2 });
  res.json(intent);
});

declare function saveOrder(id: string): Promise<void>;
`;
    const out = wireSource(file, source, [target(8)], options);
    expect(out.text).toContain("metadata: { orderId }, description: 'n' + (Date.now() % 7) * 2 }, stripeRequestOptions(idempotencyContext));");
    expect(out.text).toContain("import { randomUUID } from 'node:crypto';");
    expect(out.edits.map((e) => e.summary).join('\n')).not.toContain('derives');
  });

  it('a merchant reference built from the clock derives from the key where it provably fits; times read startedAt', () => {
    const source = `import { Router } from 'express';
import { Client, CheckoutAPI } from '@adyen/api-library';

const checkout = new CheckoutAPI(new Client({ apiKey: 'k', environment: 'TEST' }));
export const router = Router();

router.post('/payments', async (req, res) => {
  const result = await checkout.PaymentsApi.payments({ amount: { currency: 'EUR', value: 1000 }, reference: \`ORDER-\${Date.now()}\`, merchantAccount: 'm', paymentMethod: {}, returnUrl: 'https://x', sessionValidity: new Date().toISOString(), deliveryDate: new Date() });
  res.status(201).json(result);
});
`;
    const adyen = target(8, { provider: 'adyen' });
    const out = wireSource(file, source, [adyen], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain('reference: `ORDER-${providerKey(idempotencyContext)}`,');
    // A parameter made only of clock reads, whatever its name, reads the key's start time instead.
    expect(out.text).toContain("returnUrl: 'https://x', sessionValidity: new Date(idempotencyContext.startedAt).toISOString(), deliveryDate: new Date(idempotencyContext.startedAt) }, { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey });");
    expect(out.edits.map((e) => e.summary)).toContain('derives adyen payments parameter `reference` from the idempotency key instead of `Date.now()` (line 9)');
    expect(out.edits.map((e) => e.summary)).toContain("takes adyen payments parameter `deliveryDate` from the key's start time (startedAt) instead of `new Date()` (line 9)");
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
    const again = wireSource(file, out.text, [adyen], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);

    // Adyen's reference holds 80 characters: a prefix that leaves no room for the 64-character derived key is not edited.
    const long = source.replace('ORDER-', 'web-shop-order-reference-for-');
    const kept = wireSource(file, long, [adyen], options);
    expect(kept.text).toContain('reference: `web-shop-order-reference-for-${Date.now()}`');
    expect(kept.edits.map((e) => e.summary).join('\n')).not.toContain('`reference`');
  });

  it('Stripe transfer_group from the clock: the value sent is the derived key, the rule sees nothing left', () => {
    const source = `import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', transfer_group: String(Date.now()) });
  res.status(201).json(intent);
});
`;
    const out = wireSource(file, source, [target(7)], options);
    expect(out.text).toContain("transfer_group: String(providerKey(idempotencyContext)) }, stripeRequestOptions(idempotencyContext));");
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
    expect(wireSource(file, out.text, [target(7)], { ...options, anyLine: true }).text).toBe(out.text);
  });

  it('parameters held in a local the handler reassigns: the key goes after the local, the reassigned clock read counts from startedAt', () => {
    const source = `import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/checkout', async (req, res) => {
  let params: Stripe.Checkout.SessionCreateParams = { line_items: [{ price: req.body.price, quantity: 1 }] };
  if (req.body.trial) params = { ...params, mode: 'subscription', subscription_data: { trial_end: Math.floor(Date.now() / 1000) + 14 * 86400 } };
  const session = await stripe.checkout.sessions.create(params);
  res.status(201).json(session);
});
`;
    expect(findings(providerParamsChangeBetweenRetries, source).map((l) => /parameter `(\w+)`/.exec(l)?.[1])).toEqual(['trial_end']);
    const out = wireSource(file, source, [target(7, { path: '/checkout' })], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain('const session = await stripe.checkout.sessions.create(params, stripeRequestOptions(idempotencyContext));');
    expect(out.text).toContain('trial_end: Math.floor(idempotencyContext.startedAt / 1000) + 14 * 86400');
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
    expect(wireSource(file, out.text, [target(7, { path: '/checkout' })], { ...options, anyLine: true }).text).toBe(out.text);
  });

  it('a retry counter in the key, and a clock-built template key, both become the derived key', () => {
    const source = `import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const id = req.body.paymentIntent as string;
  await stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: \`pay-\${Date.now()}\` });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await stripe.refunds.create({ payment_intent: id }, { idempotencyKey: \`refund-\${id}-\${attempt}\` });
      break;
    } catch (error) {
      if (attempt === 2) throw error;
    }
  }
  res.sendStatus(204);
});
`;
    expect(findings(perAttemptProviderKey, source)).toHaveLength(2);
    const out = wireSource(file, source, [target(7)], options);
    // Two calls in one handler: one derived key each (step 0 and 1), as the other providers' keying numbers them.
    expect(out.text).toContain("{ amount: 100, currency: 'eur' }, stripeRequestOptions(idempotencyContext, 0));");
    expect(out.text).toContain('{ payment_intent: id }, stripeRequestOptions(idempotencyContext, 1));');
    expect(findings(perAttemptProviderKey, out.text)).toEqual([]);
  });

  it('an unkeyed call next to a per-attempt one: each gets its own step, never a shared key', () => {
    const source = `import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res) => {
  const customer = await stripe.customers.create({ email: req.body.email });
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', customer: customer.id }, { idempotencyKey: randomUUID() });
  await stripe.refunds.create({ payment_intent: intent.id });
  res.sendStatus(204);
});
`;
    const out = wireSource(file, source, [target(8)], options);
    // Stripe refuses a key reused with other parameters: three calls, three steps.
    expect(out.text).toContain('{ email: req.body.email }, stripeRequestOptions(idempotencyContext, 0));');
    expect(out.text).toContain("customer: customer.id }, stripeRequestOptions(idempotencyContext, 1));");
    expect(out.text).toContain('{ payment_intent: intent.id }, stripeRequestOptions(idempotencyContext, 2));');
  });

  it('Fastify: the same edit inside a route handler', () => {
    const source = `import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';

const stripe = new Stripe('sk');

export async function paymentRoutes(app: FastifyInstance): Promise<void> {
  app.post('/payments', async (request, reply) => {
    const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', metadata: { nonce: randomUUID() } }, { idempotencyKey: randomUUID() });
    return reply.code(201).send(intent);
  });
}
`;
    const out = wireSource(file, source, [target(8)], { ...options, framework: 'fastify' });
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("metadata: { nonce: providerKey(idempotencyContext) } }, stripeRequestOptions(idempotencyContext));");
    expect(out.text).toContain('const idempotencyContext = idempotencyOf(request);');
    expect(out.text).not.toContain('randomUUID');
    expect(findings(perAttemptProviderKey, out.text)).toEqual([]);
    expect(findings(providerParamsChangeBetweenRetries, out.text)).toEqual([]);
  });

  it('PayPal: a random PayPal-Request-Id becomes paypalRequestId(context)', () => {
    const source = `import { randomUUID } from 'node:crypto';
import { Client, OrdersController } from '@paypal/paypal-server-sdk';
import { Router } from 'express';

const orders = new OrdersController(new Client({}));
export const router = Router();

router.post('/payments', async (req, res) => {
  const { result } = await orders.createOrder({ body: { intent: 'CAPTURE', purchaseUnits: [] }, paypalRequestId: randomUUID() });
  res.status(201).json(result);
});
`;
    const out = wireSource(file, source, [target(8, { provider: 'paypal' })], options);
    expect(out.text).toContain('paypalRequestId: paypalRequestId(idempotencyContext) });');
    expect(out.text).not.toContain("from 'node:crypto'");
    expect(out.text.match(/paypalRequestId/g)).toHaveLength(3);
  });

  it('without providers.ts nothing is edited and the key is a manual step', () => {
    const out = wireSource(file, expressRoute, [target(8)], { ...options, scaffoldModules: new Set(['index', 'instance']) });
    expect(out.text).toContain('{ idempotencyKey: randomUUID() }');
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('not edited because the scaffold has no providers.ts');
  });

  // The transform works on the calls inside a handler: the framework around them does not matter.
  const stabilise = (rel: string, text: string, handlerOf: (sf: ReturnType<typeof parseSource>) => Node) => {
    const sf = parseSource(rel, text, style);
    const handler = handlerOf(sf);
    if (!Node.isMethodDeclaration(handler) && !Node.isFunctionDeclaration(handler) && !Node.isArrowFunction(handler)) throw new Error('no handler');
    const outcome = stabiliseProviderCalls(sf, handler, { ...target(1), file: rel }, { style, anyLine: false, scaffoldModules: options.scaffoldModules }, () => 'context');
    return { text: sf.getFullText(), outcome };
  };

  it('NestJS route transform: a method taking @Req() gets the derived key from it, one without reads idempotencyOf()', () => {
    const rel = 'src/payments/payments.controller.ts';
    const source = `import { Body, Controller, Post, Req } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';

const stripe = new Stripe('sk');

@Controller('payments')
export class PaymentsController {
  @Post()
  async create(@Req() request: unknown, @Body() body: { amount: number }) {
    return stripe.paymentIntents.create({ amount: body.amount, currency: 'eur' }, { idempotencyKey: randomUUID() });
  }
}
`;
    const nest = { ...options, framework: 'nestjs' as const };
    const t = { ...target(10), file: rel, path: '/payments', provider: 'stripe' };
    const out = wireSource(rel, source, [t], nest);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain('  @Idempotent(ACTIONS.createPayment)\n  async create(');
    expect(out.text).toContain('    const idempotencyContext = idempotencyOf(request);\n');
    expect(out.text).toContain("{ amount: body.amount, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    expect(out.text).not.toContain('randomUUID');
    expect(out.manual.map((m) => m.reason).join('\n')).not.toContain('calls from a NestJS handler need the claim');
    expect(findings(perAttemptProviderKey, out.text, rel)).toEqual([]);
    const again = wireSource(rel, out.text, [t], { ...nest, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
    // A call without any key is keyed the same way; a method without @Req() reads the claim the interceptor runs it under.
    const unkeyed = wireSource(rel, source.replace(', { idempotencyKey: randomUUID() }', ''), [t], nest);
    expect(unkeyed.text).toContain("{ amount: body.amount, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    expect(unkeyed.manual.map((m) => m.reason).join('\n')).not.toContain('calls from a NestJS handler need the claim');
    const noRequest = wireSource(rel, source.replace(', { idempotencyKey: randomUUID() }', '').replace('@Req() request: unknown, ', ''), [t], nest);
    expect(noRequest.text).toContain('  async create(@Body() body: { amount: number }) {\n    const idempotencyContext = idempotencyOf();\n');
    expect(noRequest.text).toContain("{ amount: body.amount, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    expect(noRequest.manual.map((m) => m.reason).join('\n')).not.toContain('stripe');
    expect(wireSource(rel, noRequest.text, [t], { ...nest, anyLine: true }).text).toBe(noRequest.text);
  });

  it('Next.js route transform: the wrapped route handler gets the derived key from idempotencyOf(request)', () => {
    const rel = 'app/api/checkout/route.ts';
    const source = `import Stripe from 'stripe';

const stripe = new Stripe('sk');

export async function POST(request: Request) {
  const session = await stripe.checkout.sessions.create({ mode: 'payment', metadata: { nonce: \`\${Date.now()}\` } }, { idempotencyKey: \`checkout-\${Date.now()}\` });
  return Response.json(session);
}
`;
    const next = { ...options, framework: 'nextjs' as const, scaffoldModules: new Set(['index', 'next', 'instance', 'providers']) };
    const t = { ...target(5), file: rel, path: '/api/checkout', provider: 'stripe' };
    const out = wireSource(rel, source, [t], next);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("export const POST = idempotency.withIdempotency('createPayment', createPaymentHandler);");
    expect(out.text).toContain('  const idempotencyContext = idempotencyOf(request);\n');
    expect(out.text).toContain("metadata: { nonce: `${providerKey(idempotencyContext)}` } }, stripeRequestOptions(idempotencyContext));");
    expect(findings(perAttemptProviderKey, out.text, rel)).toEqual([]);
    expect(findings(providerParamsChangeBetweenRetries, out.text, rel)).toEqual([]);
    const again = wireSource(rel, out.text, [t], { ...next, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('NestJS: a controller method', () => {
    const rel = 'src/payments/payments.controller.ts';
    const source = `import { Body, Controller, Post, Req } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';

const stripe = new Stripe('sk');

@Controller('payments')
export class PaymentsController {
  @Post()
  async create(@Req() request: unknown, @Body() body: { amount: number }) {
    const context = idempotencyOf(request);
    return stripe.paymentIntents.create({ amount: body.amount, currency: 'eur', description: \`pay \${Date.now()}\` }, { idempotencyKey: randomUUID() });
  }
}
`;
    const { text, outcome } = stabilise(rel, source, (sf) => sf.getClassOrThrow('PaymentsController').getMethodOrThrow('create'));
    expect(text).toContain("{ amount: body.amount, currency: 'eur', description: `pay ${providerKey(context)}` }, stripeRequestOptions(context));");
    expect(text).not.toContain('randomUUID');
    expect(text).toContain("import { stripeRequestOptions, providerKey } from '../idempotency/providers.js';");
    expect(outcome.edits).toHaveLength(2);
    expect(findings(perAttemptProviderKey, text, rel)).toEqual([]);
    expect(findings(providerParamsChangeBetweenRetries, text, rel)).toEqual([]);
  });

  it('Next.js: a route handler and a Server Action', () => {
    const rel = 'app/api/checkout/route.ts';
    const source = `import Stripe from 'stripe';

const stripe = new Stripe('sk');

export async function POST(request: Request) {
  const expires = Math.floor(Date.now() / 1000) + 1800;
  const session = await stripe.checkout.sessions.create({ mode: 'payment', expires_at: expires, metadata: { nonce: \`\${Date.now()}\` } }, { idempotencyKey: 'checkout-' + Math.random() });
  return Response.json(session);
}
`;
    const { text, outcome } = stabilise(rel, source, (sf) => sf.getFunctionOrThrow('POST'));
    expect(text).toContain("{ mode: 'payment', expires_at: expires, metadata: { nonce: `${providerKey(context)}` } }, stripeRequestOptions(context));");
    expect(text).toContain('const expires = Math.floor(context.startedAt / 1000) + 1800;');
    expect(outcome.kept).toEqual([]);
    expect(findings(perAttemptProviderKey, text, rel)).toEqual([]);

    const action = `'use server';
import Stripe from 'stripe';

const stripe = new Stripe('sk');

export const refund = async (paymentIntent: string) => stripe.refunds.create({ payment_intent: paymentIntent }, { idempotencyKey: \`refund-\${Date.now()}\` });
`;
    // A Server Action written as an arrow: the call is edited the same way (the caller supplies the context).
    const expression = stabilise('app/actions.ts', action, (sf) => sf.getVariableDeclarationOrThrow('refund').getInitializerOrThrow());
    expect(expression.text).toContain("{ payment_intent: paymentIntent }, stripeRequestOptions(context));");
  });
});
