import { clientControlledAmount } from '../../../src/findings/rules/client-controlled-amount.js';
import { mutatingGet } from '../../../src/findings/rules/mutating-get.js';
import { sleepRetryInRequestPath } from '../../../src/findings/rules/sleep-retry-in-request-path.js';
import { ruleTester } from '../ruleTester.js';

ruleTester(sleepRetryInRequestPath, {
  valid: [
    {
      name: 'the webhook enqueues and returns',
      files: {
        'app/api/webhooks/route.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  await queue.add('apply-event', { id: event.id }, { jobId: event.id });
  return new Response('ok');
}
declare const queue: any;
`,
      },
    },
    {
      name: 'a back-off loop in a worker is not a request path',
      files: { 'src/worker.ts': `export async function drain() {\n  for (let i = 0; i < 5; i++) {\n    try { return await work(); } catch { await sleep(1000 * i); }\n  }\n}\ndeclare function work(): Promise<void>;\ndeclare function sleep(ms: number): Promise<void>;\n` },
    },
  ],
  invalid: [
    {
      name: 'webhook waits for a row another request writes',
      files: {
        'app/api/webhooks/route.ts': `import Stripe from 'stripe';
const stripe = new Stripe('k');
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  let user = null;
  for (let tries = 0; tries < 5 && !user; tries++) {
    user = await findUser(event.data.object);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  return new Response('ok');
}
declare function findUser(o: unknown): Promise<unknown>;
`,
      },
      errors: [{ line: 6, message: /POST loops with `setTimeout/ }],
    },
  ],
});

const checkout = (amountLine: string, extra = '') => `import { stripe } from '@/lib/stripe';
export async function POST(request: Request) {
  const { priceId, quantity, amount } = await request.json();${extra}
  const session = await stripe.checkout.sessions.create({
    mode: 'payment',
    line_items: [${amountLine}],
    success_url: 'https://shop.example/ok',
  }, { idempotencyKey: request.headers.get('Idempotency-Key')! });
  return Response.json({ url: session.url, amount });
}
`;

ruleTester(clientControlledAmount, {
  valid: [
    { name: 'client picks a price id and quantity', files: { 'app/api/checkout/route.ts': checkout('{ price: priceId, quantity }') } },
    {
      name: 'amount looked up on the server',
      files: { 'app/api/checkout/route.ts': checkout("{ price_data: { currency: 'eur', unit_amount: product.unitAmount, product_data: { name: product.name } }, quantity }", '\n  const product = await catalogue.get(priceId);\n  const catalogue = new Map<string, { unitAmount: number; name: string }>();') },
    },
  ],
  invalid: [
    {
      name: 'unit amount from the body',
      files: { 'app/api/checkout/route.ts': checkout("{ price_data: { currency: 'eur', unit_amount: amount, product_data: { name: 'Order' } }, quantity }") },
      errors: [{ line: 6, message: /`unit_amount` from the request \(`unit_amount: amount`\)/ }],
    },
    {
      name: 'Express body amount converted to cents',
      files: {
        'src/routes/pay.ts': `import { Router } from 'express';
import Stripe from 'stripe';
const stripe = new Stripe('k');
export const router = Router();
router.post('/pay', async (req, res) => {
  const intent = await stripe.paymentIntents.create({ amount: Math.round(Number(req.body.total) * 100), currency: 'eur' }, { idempotencyKey: req.get('Idempotency-Key')! });
  res.json(intent);
});
`,
      },
      errors: [{ line: 6, message: /`amount`.*req\.body\.total/ }],
    },
  ],
});

ruleTester(mutatingGet, {
  valid: [
    { name: 'GET reads, POST writes', files: { 'src/routes.ts': `import { app, prisma } from './app';\napp.get('/orders', async (_req, res) => res.json(await prisma.order.findMany()));\napp.post('/orders', async (req, res) => res.json(await prisma.order.create({ data: req.body })));\n` } },
    { name: 'OAuth callback is a GET by design', files: { 'src/routes.ts': `import { app, prisma } from './app';\napp.get('/auth/callback', async (req, res) => { await prisma.session.create({ data: { user: req.query.u } }); res.redirect('/'); });\n` } },
  ],
  invalid: [
    {
      name: 'Express GET creates a checkout session',
      files: { 'src/routes.ts': `import { app, stripe } from './app';\napp.get('/subscribe', async (_req, res) => {\n  const s = await stripe.checkout.sessions.create({ mode: 'subscription' });\n  res.redirect(s.url);\n});\n` },
      errors: [{ line: 2, message: /GET \/subscribe changes state: `stripe\.checkout\.sessions\.create`/ }],
    },
    {
      name: 'Next.js GET route handler deletes',
      files: { 'app/api/cart/clear/route.ts': `import { prisma } from '@/lib/db';\nexport async function GET() {\n  await prisma.cartItem.deleteMany({});\n  return Response.json({ ok: true });\n}\n` },
      errors: [{ line: 2, message: /GET \/api\/cart\/clear/ }],
    },
  ],
});
