import { perAttemptProviderKey } from '../../../src/findings/rules/per-attempt-provider-key.js';
import { providerCallWithoutKey } from '../../../src/findings/rules/provider-call-without-key.js';
import { providerParamsChangeBetweenRetries } from '../../../src/findings/rules/provider-params-change-between-retries.js';
import { ruleTester } from '../ruleTester.js';

const refundRoute = (options: string) => `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export async function refundOrder(order: { id: string; paymentIntentId: string }) {
  return stripe.refunds.create({ payment_intent: order.paymentIntentId }${options});
}
`;

ruleTester(providerCallWithoutKey, {
  valid: [
    { name: 'refund keyed by the order id', files: { 'src/refunds.ts': refundRoute(", { idempotencyKey: `refund:${order.id}` }") } },
    { name: 'options built elsewhere may carry the key', files: { 'src/refunds.ts': refundRoute(', requestOptions(order)') } },
    { name: 'an update sets state and is safe to repeat', files: { 'src/subs.ts': `import Stripe from 'stripe';\nconst stripe = new Stripe('k');\nexport const cancel = (id: string) => stripe.subscriptions.update(id, { cancel_at_period_end: true });\n` } },
    { name: 'the app\'s own refunds table is not Stripe', files: { 'src/db.ts': `export const save = (prisma: any, r: any) => prisma.refunds.create({ data: r });\n` } },
  ],
  invalid: [
    { name: 'refund without a key moves money twice', files: { 'src/refunds.ts': refundRoute('') }, errors: [{ line: 4, message: /refunds\.create.*moves money/, severity: 'error' }] },
    {
      name: 'customer creation splits billing history',
      files: { 'src/customers.ts': `import Stripe from 'stripe';\nconst stripe = new Stripe('k');\nexport const make = (email: string) => stripe.customers.create({ email });\n` },
      errors: [{ line: 3, message: /second customer/, severity: 'warning' }],
    },
    {
      name: 'checkout session is only a note',
      files: { 'src/checkout.ts': `import { stripe } from './stripe';\nexport const start = () => stripe.checkout.sessions.create({ mode: 'payment', success_url: 'https://x.test' });\n` },
      errors: [{ line: 2, severity: 'note' }],
    },
  ],
});

ruleTester(perAttemptProviderKey, {
  valid: [
    { name: 'key from the order id', files: { 'src/refunds.ts': refundRoute(", { idempotencyKey: `refund:${order.id}` }") } },
    {
      name: 'loop over items with a per-item business key',
      files: {
        'src/payouts.ts': `import { stripe } from './stripe';
export async function payAll(items: Array<{ id: string; amount: number }>) {
  for (const item of items) {
    await stripe.transfers.create({ amount: item.amount, currency: 'eur', destination: 'acct_1' }, { idempotencyKey: \`transfer:\${item.id}\` });
  }
}
`,
      },
    },
  ],
  invalid: [
    {
      name: 'randomUUID key is new on every attempt',
      files: { 'src/refunds.ts': `import { randomUUID } from 'node:crypto';\n${refundRoute(', { idempotencyKey: randomUUID() }')}` },
      errors: [{ line: 5, message: /randomUUID\(\)/ }],
    },
    {
      name: 'Date.now() through a local const',
      files: {
        'src/charge.ts': `import { stripe } from './stripe';
export async function charge(orderId: string) {
  const key = \`pi-\${orderId}-\${Date.now()}\`;
  return stripe.paymentIntents.create({ amount: 500, currency: 'eur' }, { idempotencyKey: key });
}
`,
      },
      errors: [{ line: 4, message: /`key`/ }],
    },
    {
      name: 'attempt counter in the key of a retry loop',
      files: {
        'src/charge.ts': `import { stripe } from './stripe';
export async function charge(orderId: string) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await stripe.paymentIntents.create({ amount: 500, currency: 'eur' }, { idempotencyKey: \`\${orderId}:\${attempt}\` });
    } catch {}
  }
}
`,
      },
      errors: [{ line: 5, message: /attempt counter `attempt`/ }],
    },
  ],
});

ruleTester(providerParamsChangeBetweenRetries, {
  valid: [
    {
      name: 'trial end stored with the intent',
      files: {
        'src/subscribe.ts': `import { stripe } from './stripe';
export async function subscribe(user: { id: string; customerId: string; trialEndsAt: number }) {
  return stripe.subscriptions.create({ customer: user.customerId, items: [{ price: 'price_1' }], trial_end: user.trialEndsAt }, { idempotencyKey: \`sub:\${user.id}\` });
}
`,
      },
    },
  ],
  invalid: [
    {
      name: 'trial end from the server clock',
      files: {
        'src/subscribe.ts': `import { stripe } from './stripe';
export async function subscribe(user: { id: string; customerId: string }) {
  return stripe.subscriptions.create({
    customer: user.customerId,
    items: [{ price: 'price_1' }],
    trial_end: Math.floor(Date.now() / 1000) + 14 * 86400,
  }, { idempotencyKey: \`sub:\${user.id}\` });
}
`,
      },
      errors: [{ line: 6, message: /trial_end.*Date\.now\(\)/ }],
    },
  ],
});
