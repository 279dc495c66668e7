import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

// The provider keying (stripeKey.ts, keyHandlerCalls) is one code path; each framework only says how its handler
// reads the idempotency context. These cover the frameworks beyond Express and Fastify (express.test.ts, stableParams.test.ts).
const options = (framework: WireSourceOptions['framework'], modules: string[] = []): WireSourceOptions => ({
  framework,
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', 'providers', ...modules]),
});
const target = (file: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'global', provider: 'stripe', ...extra });

function expectIdempotent(file: string, text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  const again = wireSource(file, text, targets, { ...opts, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

const stripeHeader = `import Stripe from 'stripe';

const stripe = new Stripe('sk');
`;

describe('provider keys in every framework apply wires', () => {
  it('Koa: idempotencyOf(ctx), one step per call when the handler makes several', () => {
    const file = 'src/routes/payments.ts';
    const source = `import Router from '@koa/router';
${stripeHeader}
export const router = new Router();

router.post('/payments', async (ctx) => {
  const customer = await stripe.customers.create({ email: 'a@b.c' });
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', customer: customer.id });
  ctx.status = 201;
  ctx.body = intent;
});
`;
    const t = target(file, 8);
    const out = wireSource(file, source, [t], options('koa'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("router.post('/payments', idempotency.createPayment, async (ctx) => {\n  const idempotencyContext = idempotencyOf(ctx);\n  if (!idempotencyContext) throw new Error('idempotency middleware is not mounted on this route');\n");
    expect(out.text).toContain("stripe.customers.create({ email: 'a@b.c' }, stripeRequestOptions(idempotencyContext, 0));");
    expect(out.text).toContain("customer: customer.id }, stripeRequestOptions(idempotencyContext, 1));");
    expect(out.text).toContain("import { idempotencyOf } from '../idempotency/index.js';");
    expect(out.text).toContain("import { stripeRequestOptions } from '../idempotency/providers.js';");
    expectIdempotent(file, out.text, [t], options('koa'));
  });

  it('Hono: idempotencyOf(c), and Adyen through the same path', () => {
    const file = 'src/app.ts';
    const source = `import { Hono } from 'hono';
import { Client, CheckoutAPI } from '@adyen/api-library';

const checkout = new CheckoutAPI(new Client({ apiKey: 'k', environment: 'TEST' }));
export const app = new Hono();

app.post('/payments', async (c) => {
  const result = await checkout.PaymentsApi.payments({ amount: { currency: 'EUR', value: 1000 }, reference: 'r', merchantAccount: 'm', paymentMethod: {}, returnUrl: 'https://x' });
  return c.json(result, 201);
});
`;
    const t = target(file, 7, { provider: 'adyen' });
    const out = wireSource(file, source, [t], options('hono'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain('  const idempotencyContext = idempotencyOf(c);\n');
    expect(out.text).toContain("returnUrl: 'https://x' }, { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey });");
    expectIdempotent(file, out.text, [t], options('hono'));
  });

  it('plain idempotent(fn): the work reads the claim it runs in, idempotencyOf()', () => {
    const file = 'src/billing.ts';
    const source = `${stripeHeader}
export async function chargeInvoice(invoice: { id: string; cents: number }) {
  const intent = await stripe.paymentIntents.create({ amount: invoice.cents, currency: 'eur' });
  return { id: intent.id };
}
`;
    const t = target(file, 5, { action: 'chargeInvoice', codeName: 'chargeInvoice', path: '/invoices', keySource: 'derived' });
    const out = wireSource(file, source, [t], options('plain'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("return idempotency.chargeInvoice({ fingerprintInput: invoice }, async () => {\n    const idempotencyContext = idempotencyOf();\n");
    expect(out.text).toContain("{ amount: invoice.cents, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    expectIdempotent(file, out.text, [t], options('plain'));
  });

  it('Next.js: a route handler call without any key, a Pages API route, a Server Action', () => {
    const next = options('nextjs', ['next']);
    const route = 'app/api/checkout/route.ts';
    const routeSource = `${stripeHeader}
export async function POST(request: Request) {
  const session = await stripe.checkout.sessions.create({ mode: 'payment' });
  return Response.json(session);
}
`;
    const routeTarget = target(route, 5, { path: '/api/checkout' });
    const routed = wireSource(route, routeSource, [routeTarget], next);
    expect(routed.stale).toEqual([]);
    expect(routed.text).toContain('  const idempotencyContext = idempotencyOf(request);\n');
    expect(routed.text).toContain("create({ mode: 'payment' }, stripeRequestOptions(idempotencyContext));");
    expectIdempotent(route, routed.text, [routeTarget], next);

    const pages = 'pages/api/checkout.ts';
    const pagesSource = `import type { NextApiRequest, NextApiResponse } from 'next';
${stripeHeader}
export default async function handler(req: NextApiRequest, res: NextApiResponse) {
  res.status(201).json(await stripe.checkout.sessions.create({ mode: 'payment' }));
}
`;
    const pagesTarget = target(pages, 6, { path: '/api/checkout' });
    const paged = wireSource(pages, pagesSource, [pagesTarget], next);
    expect(paged.stale).toEqual([]);
    expect(paged.text).toContain('  const idempotencyContext = idempotencyOf(req);\n');
    expect(paged.text).toContain("create({ mode: 'payment' }, stripeRequestOptions(idempotencyContext)));");
    expectIdempotent(pages, paged.text, [pagesTarget], next);

    const actions = 'app/actions.ts';
    const actionSource = `'use server';
${stripeHeader}
export const checkout = async (priceId: string) => {
  const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: priceId, quantity: 1 }] });
  return session.url;
};
`;
    const actionTarget = target(actions, 6, { action: 'checkout', codeName: 'checkout', path: '/checkout' });
    const acted = wireSource(actions, actionSource, [actionTarget], next);
    expect(acted.stale).toEqual([]);
    expect(acted.text).toContain("idempotency.idempotentAction('checkout', async (_idempotencyKey: string, priceId: string) => {\n  const idempotencyContext = idempotencyOf();\n");
    expect(acted.text).toContain('quantity: 1 }] }, stripeRequestOptions(idempotencyContext));');
    expectIdempotent(actions, acted.text, [actionTarget], next);
  });
});
