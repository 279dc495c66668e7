import { describe, expect, it } from 'vitest';
import { httpProviderCalls } from '../../src/findings/providerCalls.js';
import { parseSource } from '../../src/apply/sourceFile.js';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

// Issue #19: payment calls made over raw HTTP (fetch, undici, axios and its instances) get the provider's idempotency
// header with the derived key the SDK transforms pass (paypalRequestId, providerKey), as the inspector reads it.
const options: WireSourceOptions = {
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', 'providers']),
};
const file = 'src/routes/payments.ts';
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'global', provider: 'paypal', ...extra });

/** The inspector's view of the edited text: every raw-HTTP provider call, and whether it sends its key. */
const keyed = (text: string, rel = file) => calls(text, rel).map((c) => c.keyed);
const calls = (text: string, rel = file) => {
  const sf = parseSource(rel, text, { quote: 'single', semicolons: true });
  return httpProviderCalls({ rel, text, sf: sf.compilerNode, dependencies: new Map() });
};
/** Whether each call sends a key, and whether that key is made anew on each call. */
const keys = (text: string) => calls(text).map((c) => (c.keyed ? (c.keyPerAttempt ? 'per call' : 'stable') : 'none'));

function wire(source: string, t: WiringTarget, opts: WireSourceOptions = options) {
  const out = wireSource(file, source, [t], opts);
  expect(out.stale).toEqual([]);
  const again = wireSource(file, out.text, [t], { ...opts, anyLine: true });
  expect(again.text).toBe(out.text);
  expect(again.edits).toEqual([]);
  return out;
}

/** An Express route around `body`, the route on line 6. */
const route = (imports: string, body: string) => `${imports}
import { Router } from 'express';

const PAYPAL_API = process.env.PAYPAL_API_BASE ?? 'https://api-m.sandbox.paypal.com';
export const router = Router();
router.post('/payments', async (req, res) => {
${body}
  res.status(201).end();
});
`;

describe('provider keys on raw-HTTP payment calls', () => {
  it('fetch: the header joins a literal headers object, or a headers property is added', () => {
    const source = route(
      '',
      `  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, {
    method: 'POST',
    headers: { Authorization: \`Bearer \${req.body.token}\`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ intent: 'CAPTURE' }),
  });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, { method: 'POST' });`,
    );
    expect(keyed(source)).toEqual([false, false]);
    const out = wire(source, target(6));
    expect(out.text).toContain("import { paypalRequestId } from '../idempotency/providers.js';");
    expect(out.text).toContain('  const idempotencyContext = idempotencyOf(req);\n');
    expect(out.text).toMatch(/'Content-Type': 'application\/json',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 0\)/);
    expect(out.text).toMatch(/\{ method: 'POST',\s*headers: \{ 'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 1\) \} \}/);
    expect(out.edits.map((e) => e.summary)).toEqual([
      expect.stringContaining('mounts'),
      'sends the derived paypal idempotency key as the PayPal-Request-Id header of paypal v2/checkout/orders (line 8)',
      'sends the derived paypal idempotency key as the PayPal-Request-Id header of paypal v2/checkout/orders/{id}/capture (line 13)',
    ]);
    expect(out.manual.map((m) => m.reason).join('\n')).not.toContain('not made inside the route handler');
    expect(keyed(out.text)).toEqual([true, true]);
  });

  it('keeps the layout: a multi-line literal gets its own line and trailing comma, a template literal is untouched', () => {
    const source = route(
      '',
      `  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer t',
      'Content-Type': 'application/json',
    },
    body: \`{
  "intent": "CAPTURE"
}\`,
  });`,
    );
    const out = wire(source, target(6));
    expect(out.text).toContain(`    headers: {
      Authorization: 'Bearer t',
      'Content-Type': 'application/json',
      'PayPal-Request-Id': paypalRequestId(idempotencyContext),
    },
    body: \`{
  "intent": "CAPTURE"
}\`,
  });`);
    expect(keyed(out.text)).toEqual([true]);
  });

  it('undici request and Stripe over fetch: Idempotency-Key from providerKey, after the handler\u2019s SDK call', () => {
    const source = route(
      "import Stripe from 'stripe';\nimport { request } from 'undici';\nconst stripe = new Stripe('sk');",
      `  const customer = await stripe.customers.create({ email: req.body.email });
  await request('https://api.stripe.com/v1/payment_intents', { method: 'POST', headers: { authorization: 'Bearer sk' }, body: \`customer=\${customer.id}\` });`,
    );
    const out = wire(source, target(8, { provider: 'stripe' }));
    expect(out.text).toContain('stripe.customers.create({ email: req.body.email }, stripeRequestOptions(idempotencyContext));');
    expect(out.text).toContain("import { stripeRequestOptions, providerKey } from '../idempotency/providers.js';");
    expect(out.text).toMatch(/authorization: 'Bearer sk',\s*'Idempotency-Key': providerKey\(idempotencyContext, 1\)/);
    expect(keyed(out.text)).toEqual([true]);
  });

  it('axios: the config argument is added (undefined for a missing body), or the header joins its headers', () => {
    const source = route(
      "import axios from 'axios';",
      `  await axios.post(\`\${PAYPAL_API}/v2/checkout/orders\`, { intent: 'CAPTURE' });
  await axios.post(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`);
  await axios.post(\`\${PAYPAL_API}/v2/payments/captures/\${req.body.id}/refund\`, {}, { headers: { Authorization: 'Bearer t' } });
  await axios.patch(\`\${PAYPAL_API}/v1/billing/subscriptions/\${req.body.id}\`, [], { timeout: 5000 });
  await axios({ url: \`\${PAYPAL_API}/v1/payments/payouts\`, method: 'post', data: req.body.batch, headers: { Authorization: 'Bearer t' } });`,
    );
    expect(keyed(source)).toEqual([false, false, false, false, false]);
    const out = wire(source, target(7));
    expect(out.text).toContain("axios.post(`${PAYPAL_API}/v2/checkout/orders`, { intent: 'CAPTURE' }, { headers: { 'PayPal-Request-Id': paypalRequestId(idempotencyContext, 0) } });");
    expect(out.text).toContain('/capture`, undefined, { headers: { \'PayPal-Request-Id\': paypalRequestId(idempotencyContext, 1) } });');
    expect(out.text).toMatch(/\{ headers: \{ Authorization: 'Bearer t',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 2\) \} \}/);
    expect(out.text).toMatch(/\{ timeout: 5000,\s*headers: \{ 'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 3\) \} \}/);
    expect(out.text).toMatch(/data: req\.body\.batch, headers: \{ Authorization: 'Bearer t',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 4\) \} \}/);
    expect(keyed(out.text)).toEqual([true, true, true, true, true]);
  });

  it('a client created with PayPal\u2019s base URL calling a relative path (axios.create, this.http)', () => {
    const source = route(
      "import axios from 'axios';\nconst paypal = axios.create({ baseURL: process.env.PAYPAL_API_BASE });",
      "  const { data } = await paypal.post('/v2/checkout/orders', { intent: 'CAPTURE', purchase_units: req.body.units });",
    );
    expect(keyed(source)).toEqual([false]);
    const out = wire(source, target(7));
    expect(out.text).toContain("paypal.post('/v2/checkout/orders', { intent: 'CAPTURE', purchase_units: req.body.units }, { headers: { 'PayPal-Request-Id': paypalRequestId(idempotencyContext) } });");
    expect(keyed(out.text)).toEqual([true]);

    const rel = 'src/payments/payments.controller.ts';
    const nest = `import { HttpService } from '@nestjs/axios';
import { Body, Controller, Post, Req } from '@nestjs/common';
import { firstValueFrom } from 'rxjs';

@Controller('payments')
export class PaymentsController {
  // Calls PayPal through the HttpModule registered with PayPal's base URL.
  constructor(private readonly http: HttpService) {}

  @Post()
  async create(@Req() request: unknown, @Body() body: { units: unknown[] }) {
    return firstValueFrom(this.http.post('/v2/checkout/orders', { intent: 'CAPTURE', purchase_units: body.units }));
  }
}
`;
    const t = { ...target(11), file: rel };
    const wired = wireSource(rel, nest, [t], { ...options, framework: 'nestjs' });
    expect(wired.text).toContain("purchase_units: body.units }, { headers: { 'PayPal-Request-Id': paypalRequestId(idempotencyContext) } }));");
    expect(wireSource(rel, wired.text, [t], { ...options, framework: 'nestjs', anyLine: true }).text).toBe(wired.text);
    expect(keyed(wired.text, rel)).toEqual([true]);
  });

  it('leaves calls apply cannot extend to the user, with the reason, and edits nothing for them', () => {
    const source = route(
      "import axios from 'axios';\nimport superagent from 'superagent';",
      `  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers: req.body.headers });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers: new Headers(req.body.headers) });
  await axios.post(\`\${PAYPAL_API}/v2/checkout/orders\`, {}, req.body.config);
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { ...req.body.init, method: 'POST' });
  await superagent.post(\`\${PAYPAL_API}/v2/checkout/orders\`, {});`,
    );
    const out = wireSource(file, source, [target(7)], options);
    expect(out.text).not.toContain('PayPal-Request-Id');
    expect(out.text).not.toContain('paypalRequestId');
    // Lines as the SDK keying reports them: in the text with the route's imports added.
    const reasons = out.manual.filter((m) => m.reason.startsWith('the raw-HTTP')).map((m) => `${m.line}: ${m.reason.replace(/.*not edited because /, '')}`);
    expect(reasons).toEqual([
      '9: its headers are not an object literal',
      '10: its Headers instance is made from another object, which may be shared',
      '11: its request config is not an object literal',
      '12: its options spread another object whose headers a new headers property would replace',
      '13: apply cannot tell which HTTP client superagent is (axios takes the headers third, got and ky second)',
    ]);
    // Without providers.ts nothing is edited either.
    const bare = wireSource(file, route('', `  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST' });`), [target(6)], { ...options, scaffoldModules: new Set(['index', 'instance']) });
    expect(bare.text).not.toContain('PayPal-Request-Id');
    expect(bare.manual.map((m) => m.reason).join('\n')).toContain('the scaffold has no providers.ts');
  });

  it('got and ky take the headers in their options; Adyen over fetch gets Idempotency-Key', () => {
    const source = route(
      "import got from 'got';\nimport ky from 'ky';",
      `  await got.post(\`\${PAYPAL_API}/v2/checkout/orders\`, { json: { intent: 'CAPTURE' } });
  await ky.post(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`);`,
    );
    const out = wire(source, target(7));
    expect(out.text).toContain("{ json: { intent: 'CAPTURE' }, headers: { 'PayPal-Request-Id': paypalRequestId(idempotencyContext, 0) } });");
    expect(out.text).toContain("/capture`, { headers: { 'PayPal-Request-Id': paypalRequestId(idempotencyContext, 1) } });");
    expect(keyed(out.text)).toEqual([true, true]);

    const adyen = route('', "  await fetch('https://checkout-test.adyen.com/v71/payments', { method: 'POST', headers: { 'x-api-key': 'k' }, body: JSON.stringify(req.body) });");
    const keyedAdyen = wire(adyen, target(6, { provider: 'adyen' }));
    expect(keyedAdyen.text).toContain("headers: { 'x-api-key': 'k', 'Idempotency-Key': providerKey(idempotencyContext) }");
    expect(keyed(keyedAdyen.text)).toEqual([true]);
  });

  it('a PayPal call in an action whose provider is not PayPal is listed, not edited (paypalRequestId may be missing)', () => {
    const source = route('', "  await fetch(`${PAYPAL_API}/v2/checkout/orders`, { method: 'POST' });");
    const out = wireSource(file, source, [target(6, { provider: 'stripe' })], options);
    expect(out.text).not.toContain('PayPal-Request-Id');
    expect(out.manual.map((m) => m.reason).join('\n')).toContain("the action's provider is not PayPal");
  });

  it('a call that already sends its header is left alone', () => {
    const source = route('', "  await fetch(`${PAYPAL_API}/v2/checkout/orders`, { method: 'POST', headers: { 'PayPal-Request-Id': req.body.requestId } });");
    const out = wire(source, target(6));
    expect(out.text).not.toContain('paypalRequestId');
    expect(out.text).not.toContain('providers.js');
  });

  it('a Headers object: headers.set before the call, or the key joins the literal the Headers is made from', () => {
    const source = route(
      '',
      `  const headers = new Headers({ Authorization: 'Bearer t' });
  headers.set('Content-Type', 'application/json');
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers, body: JSON.stringify({ intent: 'CAPTURE' }) });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, { method: 'POST', headers: new Headers({ Authorization: 'Bearer t' }) });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/authorize\`, { method: 'POST', headers: new Headers() });
  const refundHeaders = { Authorization: 'Bearer t' };
  await fetch(\`\${PAYPAL_API}/v2/payments/captures/\${req.body.id}/refund\`, { method: 'POST', headers: refundHeaders });`,
    );
    expect(keyed(source)).toEqual([false, false, false, false]);
    const out = wire(source, target(6));
    expect(out.text).toContain(`  headers.set('Content-Type', 'application/json');
  headers.set('PayPal-Request-Id', paypalRequestId(idempotencyContext, 0));
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers, body`);
    expect(out.text).toMatch(/headers: new Headers\(\{ Authorization: 'Bearer t',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 1\) \}\)/);
    expect(out.text).toContain("headers: new Headers({ 'PayPal-Request-Id': paypalRequestId(idempotencyContext, 2) })");
    expect(out.text).toMatch(/const refundHeaders = \{ Authorization: 'Bearer t',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 3\) \}/);
    expect(out.manual.filter((m) => m.reason.startsWith('the raw-HTTP'))).toEqual([]);
    expect(keys(out.text)).toEqual(['stable', 'stable', 'stable', 'stable']);
  });

  it('options or an axios config held in a local that only this call sends get the header there', () => {
    const source = route(
      "import axios from 'axios';",
      `  const config = { headers: { Authorization: 'Bearer t' }, timeout: 5000 };
  await axios.post(\`\${PAYPAL_API}/v2/checkout/orders\`, { intent: 'CAPTURE' }, config);
  const init = { method: 'POST' };
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, init);
  const shared = { timeout: 5000 };
  await axios.post(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/authorize\`, {}, shared);
  await axios.post(\`\${PAYPAL_API}/v2/payments/authorizations/\${req.body.id}/capture\`, {}, shared);`,
    );
    const out = wireSource(file, source, [target(7)], options);
    expect(out.text).toMatch(/const config = \{ headers: \{ Authorization: 'Bearer t',\s*'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 0\) \}, timeout: 5000 \};/);
    expect(out.text).toMatch(/const init = \{ method: 'POST',\s*headers: \{ 'PayPal-Request-Id': paypalRequestId\(idempotencyContext, 1\) \} \};/);
    expect(out.text).toContain('const shared = { timeout: 5000 };');
    expect(out.manual.filter((m) => m.reason.startsWith('the raw-HTTP')).map((m) => m.reason.replace(/.*not edited because /, ''))).toEqual([
      'its options `shared` are sent by another call too, which would then send the same key',
      'its options `shared` are sent by another call too, which would then send the same key',
    ]);
    expect(keyed(out.text)).toEqual([true, true, false, false]);
    expect(wireSource(file, out.text, [target(7)], { ...options, anyLine: true }).text).toBe(out.text);
  });

  it('a key set through headers.set / append or config.headers[…] counts; one made anew on each call gets the derived key', () => {
    const source = route(
      "import axios from 'axios';\nimport { randomUUID } from 'node:crypto';",
      `  const orderHeaders = new Headers({ Authorization: 'Bearer t' });
  orderHeaders.append('PayPal-Request-Id', \`order-\${req.body.cartId}\`);
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers: orderHeaders });
  const captureHeaders = new Headers();
  captureHeaders.set('PayPal-Request-Id', randomUUID());
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, { method: 'POST', headers: captureHeaders });
  const config = { headers: { Authorization: 'Bearer t' } as Record<string, string> };
  const requestId = randomUUID();
  config.headers['PayPal-Request-Id'] = requestId;
  await axios.post(\`\${PAYPAL_API}/v2/payments/captures/\${req.body.id}/refund\`, {}, config);`,
    );
    expect(keys(source)).toEqual(['stable', 'per call', 'per call']);
    const out = wire(source, target(7));
    expect(out.text).toContain("orderHeaders.append('PayPal-Request-Id', `order-${req.body.cartId}`);");
    expect(out.text).toContain("captureHeaders.set('PayPal-Request-Id', paypalRequestId(idempotencyContext, 1));");
    expect(out.text).toContain('const requestId = paypalRequestId(idempotencyContext, 2);');
    expect(out.text).not.toContain('randomUUID');
    expect(out.edits.map((e) => e.summary)).toContain('sends the derived paypal idempotency key as the PayPal-Request-Id header of paypal v2/checkout/orders/{id}/capture instead of one made anew on each call (line 14)');
    expect(keys(out.text)).toEqual(['stable', 'stable', 'stable']);
  });

  it('a key set on one call\u2019s Headers does not count for another call of the handler', () => {
    const source = route(
      '',
      `  const captureHeaders = new Headers({ 'PayPal-Request-Id': req.body.captureId });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers: new Headers({ Authorization: 'Bearer t' }) });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, { method: 'POST', headers: captureHeaders });`,
    );
    expect(keys(source)).toEqual(['none', 'stable']);
    // Two functions each with their own \`headers\`: each call reads its own.
    const twoFunctions = `export async function capture(id: string) {
  const headers = new Headers({ 'PayPal-Request-Id': \`capture-\${id}\` });
  return fetch(\`https://api-m.paypal.com/v2/checkout/orders/\${id}/capture\`, { method: 'POST', headers });
}
export async function refund(id: string) {
  const headers = new Headers({ Authorization: 'Bearer t' });
  return fetch(\`https://api-m.paypal.com/v2/payments/captures/\${id}/refund\`, { method: 'POST', headers });
}
`;
    expect(keys(twoFunctions)).toEqual(['stable', 'none']);
  });

  it('Headers apply cannot key safely are left to the user with the reason', () => {
    const source = route(
      "import { randomUUID } from 'node:crypto';\nconst SHARED = new Headers({ Authorization: 'Bearer t' });",
      `  const headers = new Headers({ Authorization: 'Bearer t' });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/capture\`, { method: 'POST', headers });
  await fetch(\`\${PAYPAL_API}/v2/checkout/orders/\${req.body.id}/authorize\`, { method: 'POST', headers: SHARED });
  const batch = new Headers();
  await Promise.all(req.body.items.map((item: string) => fetch(\`\${PAYPAL_API}/v1/payments/payouts/\${item}\`, { method: 'POST', headers: batch })));
  const logged = new Headers();
  const requestId = randomUUID();
  logged.set('PayPal-Request-Id', requestId);
  console.info('paypal request', requestId);
  await fetch(\`\${PAYPAL_API}/v2/payments/captures/\${req.body.id}/refund\`, { method: 'POST', headers: logged });`,
    );
    const out = wireSource(file, source, [target(7)], options);
    expect(out.text).not.toContain('paypalRequestId');
    const reasons = out.manual.filter((m) => m.reason.startsWith('the raw-HTTP')).map((m) => m.reason.replace(/.*not edited because /, ''));
    expect(reasons).toEqual([
      'its headers `headers` are sent by another call too, which would then send the same key',
      'its headers `headers` are sent by another call too, which would then send the same key',
      'its headers `SHARED` are made outside the function that sends them',
      'its Headers object `batch` is sent from a callback, where a set before it would not run per call',
      'its key `requestId` (`randomUUID()`) also feeds 1 other place in the function, which would change with it',
    ]);
    expect(out.manual.at(-1)?.reason).toContain('sends a PayPal-Request-Id header made anew on each call (`requestId`)');
  });
});
