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

/** Stripe over fetch with a Headers object (issue #19): `set` is how the key is added, or the line that makes it. */
const stripeFetch = (set: string) => `import { randomUUID } from 'node:crypto';
export async function refund(pi: string) {
  const headers = new Headers({ Authorization: \`Bearer \${process.env.STRIPE_SECRET_KEY}\` });
  headers.set('Content-Type', 'application/x-www-form-urlencoded');
${set}  return fetch('https://api.stripe.com/v1/refunds', { method: 'POST', headers, body: new URLSearchParams({ payment_intent: pi }) });
}
`;

const paypalRest = (options: string) => `import axios from 'axios';
const paypal = axios.create({ baseURL: process.env.PAYPAL_API });
export async function createOrder(cartId: string, body: unknown) {
  return paypal.post('/v2/checkout/orders', body${options});
}
`;

ruleTester(providerCallWithoutKey, {
  valid: [
    { name: 'refund keyed by the order id', files: { 'src/refunds.ts': refundRoute(", { idempotencyKey: `refund:${order.id}` }") } },
    { name: 'options built elsewhere may carry the key', files: { 'src/refunds.ts': refundRoute(', requestOptions(order)') } },
    { name: 'an update sets state and is safe to repeat', files: { 'src/subs.ts': `import Stripe from 'stripe';\nconst stripe = new Stripe('k');\nexport const cancel = (id: string) => stripe.subscriptions.update(id, { cancel_at_period_end: true });\n` } },
    { name: 'a checkout session is a harmless duplicate', files: { 'src/checkout.ts': `import { stripe } from './stripe';\nexport const start = () => stripe.checkout.sessions.create({ mode: 'payment', success_url: 'https://x.test' });\n` } },
    { name: 'a billing-portal session is a harmless duplicate', files: { 'src/portal.ts': `import { stripe } from './stripe';\nexport const portal = (customer: string) => stripe.billingPortal.sessions.create({ customer, return_url: 'https://x.test' });\n` } },
    { name: 'the app\'s own refunds table is not Stripe', files: { 'src/db.ts': `export const save = (prisma: any, r: any) => prisma.refunds.create({ data: r });\n` } },
    { name: 'a PayPal REST create sent with PayPal-Request-Id', files: { 'src/paypal.ts': paypalRest(", { headers: { 'PayPal-Request-Id': `order:${cartId}` } }") } },
    { name: 'a Stripe refund over fetch whose Headers object gets Idempotency-Key through set', files: { 'src/refund.ts': stripeFetch("  headers.set('Idempotency-Key', `refund:${pi}`);\n") } },
    { name: 'a PayPal REST read is safe to repeat', files: { 'src/paypal.ts': `import axios from 'axios';\nconst paypal = axios.create({ baseURL: process.env.PAYPAL_API });\nexport const order = (id: string) => paypal.get(\`/v2/checkout/orders/\${id}\`);\n` } },
  ],
  invalid: [
    { name: 'refund without a key moves money twice', files: { 'src/refunds.ts': refundRoute('') }, errors: [{ line: 4, message: /refunds\.create.*refunds a second time/, severity: 'error' }] },
    {
      name: 'customer creation splits billing history',
      files: { 'src/customers.ts': `import Stripe from 'stripe';\nconst stripe = new Stripe('k');\nexport const make = (email: string) => stripe.customers.create({ email });\n` },
      errors: [{ line: 3, message: /second customer/, severity: 'warning' }],
    },
    {
      name: 'a PayPal REST create over an axios instance, without PayPal-Request-Id',
      files: { 'src/paypal.ts': paypalRest('') },
      errors: [{ line: 4, message: /v2\/checkout\/orders is requested over HTTP without the PayPal-Request-Id header: a retry creates a second/, severity: 'warning' }],
    },
    {
      name: 'a Stripe refund over fetch, without Idempotency-Key',
      files: { 'src/refund.ts': `export const refund = (pi: string) => fetch('https://api.stripe.com/v1/refunds', { method: 'POST', body: new URLSearchParams({ payment_intent: pi }) });\n` },
      errors: [{ line: 1, message: /refunds\.create is requested over HTTP without the Idempotency-Key header: a retry refunds a second time/, severity: 'error' }],
    },
    {
      name: 'a Stripe refund over fetch with a Headers object that has no Idempotency-Key, beside a call whose Headers has one',
      files: { 'src/refund.ts': `${stripeFetch('')}export async function charge(amount: number) {\n  const headers = new Headers();\n  headers.append('Idempotency-Key', \`charge:\${amount}\`);\n  return fetch('https://api.stripe.com/v1/payment_intents', { method: 'POST', headers });\n}\n` },
      errors: [{ line: 5, message: /refunds\.create is requested over HTTP without the Idempotency-Key header/, severity: 'error' }],
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
    {
      // As apply threads a context into a service: the context's callers send the derived key; a caller without one
      // sends what it sent before, which is not the protected path.
      name: 'a per-call key guarded by the context apply threads in',
      files: { 'src/refunds.ts': `import { randomUUID } from 'node:crypto';\nimport { stripeRequestOptions, type ProviderKeySource } from './idempotency/providers';\n${refundRoute(', { idempotencyKey: idempotencyContext ? stripeRequestOptions(idempotencyContext).idempotencyKey : randomUUID() }').replace('paymentIntentId: string })', 'paymentIntentId: string }, idempotencyContext?: ProviderKeySource)')}` },
    },
    {
      name: "the caller's key first, then the guarded fallback, through a local",
      files: {
        'src/charge.ts': `import { randomUUID } from 'node:crypto';
import { stripe } from './stripe';
import { stripeRequestOptions, type ProviderKeySource } from './idempotency/providers';
export async function charge(orderId: string, options?: { idempotencyKey?: string }, idempotencyContext?: ProviderKeySource) {
  const idempotencyKey = options?.idempotencyKey || (idempotencyContext ? stripeRequestOptions(idempotencyContext, 1).idempotencyKey : randomUUID());
  return stripe.paymentIntents.create({ amount: 500, currency: 'eur', metadata: { orderId } }, { idempotencyKey });
}
`,
      },
    },
  ],
  invalid: [
    {
      name: 'a Stripe refund over fetch whose Headers object gets a random Idempotency-Key',
      files: { 'src/refund.ts': stripeFetch("  headers.set('Idempotency-Key', randomUUID());\n") },
      errors: [{ line: 5, message: /refunds\.create sends the Idempotency-Key header from `randomUUID\(\)`, which is new on every attempt/ }],
    },
    {
      name: 'a guard that does not derive the key from the context it tests',
      files: { 'src/refunds.ts': `import { randomUUID } from 'node:crypto';\nimport { stripeRequestOptions } from './idempotency/providers';\n${refundRoute(', { idempotencyKey: order.id ? stripeRequestOptions(other).idempotencyKey : randomUUID() }')}` },
      errors: [{ line: 6, message: /randomUUID\(\)/ }],
    },
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
      name: 'a helper that does not read the clock, and one of the same name in a file the call does not import',
      files: {
        'src/subscribe.ts': `import { stripe } from './stripe';
import { trialEnd } from './plans';
export async function subscribe(customer: string, plan: { trialEndsAt: number }) {
  return stripe.subscriptions.create({ customer, items: [{ price: 'price_1' }], trial_end: trialEnd(plan) });
}
`,
        'src/plans.ts': `export const trialEnd = (plan: { trialEndsAt: number }) => plan.trialEndsAt;
`,
        'src/other/plans.ts': `export const trialEnd = () => Math.floor(Date.now() / 1000) + 86400;
`,
      },
    },
    {
      name: 'metadata stays one label: its nested values are not read as times',
      files: {
        'src/pay.ts': `import { stripe } from './stripe';
export async function pay(order: { id: string; total: number }) {
  return stripe.paymentIntents.create({ amount: order.total, currency: 'eur', metadata: { orderId: order.id } }, { idempotencyKey: \`pay:\${order.id}\` });
}
`,
      },
    },
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
    {
      // vercel/nextjs-subscription-payments: `let params = { … }` is given a subscription_data later, whose trial_end an
      // imported helper computes from the clock.
      name: 'nested trial end in a reassigned parameters literal, from an imported helper that reads the clock',
      files: {
        'utils/stripe/server.ts': `import { stripe } from '@/utils/stripe/config';
import { calculateTrialEnd } from '@/utils/helpers';
export async function checkout(price: { id: string; type: string; trial_period_days: number | null }) {
  let params: Record<string, unknown> = { line_items: [{ price: price.id, quantity: 1 }] };
  if (price.type === 'recurring') {
    params = {
      ...params,
      mode: 'subscription',
      subscription_data: { trial_end: calculateTrialEnd(price.trial_period_days) },
    };
  }
  return stripe.checkout.sessions.create(params);
}
`,
        'utils/helpers.ts': `export const calculateTrialEnd = (days: number | null) => {
  if (days === null) return undefined;
  const now = new Date();
  const end = new Date(now.getTime() + days * 86400000);
  return Math.floor(end.getTime() / 1000);
};
export function label(id: string) {
  return \`order-\${id}\`;
}
`,
      },
      errors: [{ line: 9, message: /parameter `trial_end` comes from `calculateTrialEnd\(price\.trial_period_days\)`, and calculateTrialEnd reads `new Date\(\)` \(utils\/helpers\.ts:3\)/ }],
    },
    {
      name: 'a same-file helper that reads the clock, nested under a name with no meaning of its own',
      files: {
        'src/subscribe.ts': `import { stripe } from './stripe';
function trialEnd(days: number) {
  return Math.floor(Date.now() / 1000) + days * 86400;
}
export async function subscribe(customer: string) {
  return stripe.subscriptions.create({ customer, items: [{ price: 'price_1' }], trial_settings: { end_behavior: { missing_payment_method: 'cancel' } }, subscription_data: { trial_end: trialEnd(14) } });
}
`,
      },
      errors: [{ line: 6, message: /`trial_end` comes from `trialEnd\(14\)`, and trialEnd reads `Date\.now\(\)` \(src\/subscribe\.ts:3\)/ }],
    },
  ],
});

const adyenPayment = (options: string) => `import { CheckoutAPI, Client } from '@adyen/api-library';
const checkout = new CheckoutAPI(new Client({ apiKey: process.env.ADYEN_API_KEY!, environment: 'TEST' }));
export async function payOrder(order: { id: string; total: number }) {
  return checkout.PaymentsApi.payments({ amount: { value: order.total, currency: 'EUR' }, reference: order.id, merchantAccount: 'Shop' }${options});
}
`;
const adyenRefund = (options: string) => `import { CheckoutAPI, Client } from '@adyen/api-library';
const checkout = new CheckoutAPI(new Client({ apiKey: 'k', environment: 'TEST' }));
export async function refund(psp: string, orderId: string) {
  return checkout.ModificationsApi.refundCapturedPayment(psp, { amount: { value: 100, currency: 'EUR' }, merchantAccount: 'Shop', reference: orderId }${options});
}
`;
const paypalOrder = (extra: string) => `import { Client, OrdersController } from '@paypal/paypal-server-sdk';
const ordersController = new OrdersController(new Client({}));
export async function captureCart(cart: { id: string; orderId: string }) {
  return ordersController.captureOrder({ id: cart.orderId${extra} });
}
`;
const nonStripe = { '@adyen/api-library': '^32.1.0', '@paypal/paypal-server-sdk': '^2.5.0' };

ruleTester(providerCallWithoutKey, {
  valid: [
    { name: 'Adyen payment keyed by the order', files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: `pay:${order.id}` }') }, dependencies: nonStripe },
    { name: 'Adyen refund keyed by the order', files: { 'src/refund.ts': adyenRefund(', { idempotencyKey: `refund:${orderId}` }') }, dependencies: nonStripe },
    { name: 'PayPal capture with PayPal-Request-Id', files: { 'src/capture.ts': paypalOrder(', paypalRequestId: `capture:${cart.id}`') }, dependencies: nonStripe },
  ],
  invalid: [
    { name: 'Adyen payment without a key moves money twice', files: { 'src/pay.ts': adyenPayment('') }, dependencies: nonStripe, errors: [{ line: 4, message: /adyen payments is called without an idempotencyKey: a retry moves money a second time through Adyen/, severity: 'error' }] },
    { name: 'Adyen refund (id first) without a key', files: { 'src/refund.ts': adyenRefund('') }, dependencies: nonStripe, errors: [{ line: 4, message: /refunds a second time through Adyen/, severity: 'error' }] },
    { name: 'PayPal capture without PayPal-Request-Id', files: { 'src/capture.ts': paypalOrder('') }, dependencies: nonStripe, errors: [{ line: 4, message: /paypal .*capture is called without a paypalRequestId/, severity: 'error' }] },
  ],
});

ruleTester(perAttemptProviderKey, {
  valid: [
    { name: 'Adyen key from the order id', files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: `pay:${order.id}` }') }, dependencies: nonStripe },
    { name: 'Adyen per-call key guarded by the threaded context', files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: idempotencyContext ? adyenIdempotency(idempotencyContext).idempotencyKey : `pay:${Date.now()}` }') }, dependencies: nonStripe },
    { name: 'PayPal per-call request id guarded by the threaded context', files: { 'src/capture.ts': `import { randomUUID } from 'node:crypto';\n${paypalOrder(', paypalRequestId: idempotencyContext ? paypalRequestId(idempotencyContext) : randomUUID()')}` }, dependencies: nonStripe },
  ],
  invalid: [
    { name: 'Adyen key from Date.now()', files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: `pay:${Date.now()}` }') }, dependencies: nonStripe, errors: [{ line: 4, message: /adyen payments gets a key \(idempotencyKey\) from `Date\.now\(\)`/ }] },
    { name: 'PayPal request id guarded by a context that is not the helper\'s', files: { 'src/capture.ts': `import { randomUUID } from 'node:crypto';\n${paypalOrder(', paypalRequestId: context ? paypalRequestId(other) : randomUUID()')}` }, dependencies: nonStripe, errors: [{ line: 5, message: /randomUUID\(\)/ }] },
    { name: 'PayPal request id from randomUUID()', files: { 'src/capture.ts': `import { randomUUID } from 'node:crypto';\n${paypalOrder(', paypalRequestId: randomUUID()')}` }, dependencies: nonStripe, errors: [{ line: 5, message: /gets a key \(paypalRequestId\) from `randomUUID\(\)`/ }] },
  ],
});

ruleTester(providerParamsChangeBetweenRetries, {
  valid: [{ name: 'Adyen reference from the order', files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: `pay:${order.id}` }') }, dependencies: nonStripe }],
  invalid: [
    {
      name: 'Adyen reference from the clock',
      files: { 'src/pay.ts': adyenPayment(', { idempotencyKey: `pay:${order.id}` }').replace('reference: order.id', 'reference: `${order.id}-${Date.now()}`') },
      dependencies: nonStripe,
      errors: [{ line: 4, message: /adyen payments parameter `reference` comes from `Date\.now\(\)`/ }],
    },
  ],
});
