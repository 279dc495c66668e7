import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

// Shapes from sahat/hackathon-starter (JavaScript, Express): PayPal orders created and captured on GET routes, and a
// Stripe charge made in stripe-node's callback form.
const options: WireSourceOptions = {
  framework: 'express',
  scaffoldDir: 'idempotency',
  imports: { aliases: [], defaultExtension: '' },
  scaffoldModules: new Set(['index', 'instance', 'providers']),
};
const app = `const express = require('express');
const apiController = require('./controllers/api');
const app = express();
app.get('/api/paypal', apiController.getPayPal);
app.get('/api/paypal/success', apiController.getPayPalSuccess);
app.get('/orders/:token/confirm', apiController.confirm);
module.exports = app;
`;
const target = (codeName: string, path: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: codeName, codeName, trigger: 'http', method: 'GET', path, file: 'app.js', line, scope: 'global', ...extra });

describe('apply on GET routes', () => {
  it('a GET keyed by a client header is left to the user with why, never reported as a file that moved on', () => {
    const out = wireSource('app.js', app, [target('getPayPal', '/api/paypal', 4), target('getPayPalSuccess', '/api/paypal/success', 5)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toBe(app);
    expect(out.manual.map((m) => `${m.action}:${m.line}`)).toEqual(['getPayPalSuccess:5', 'getPayPal:4']);
    expect(out.manual[1]!.reason).toMatch(/^GET \/api\/paypal changes state on a GET: links, redirects back from a provider and prefetches reach it without an Idempotency-Key header/);
    expect(out.manual[1]!.reason).toContain('"key": { "source": "derived"');
  });

  it('a GET keyed by a field of the request itself is wired like any route', () => {
    const out = wireSource('app.js', app, [target('confirm', '/orders/:token/confirm', 6, { keySource: 'derived' })], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("app.get('/orders/:token/confirm', idempotency.confirm, apiController.confirm);");
  });
});

describe('apply on a Stripe call in callback form', () => {
  it('puts the request options between the parameters and the callback', () => {
    const routes = `const express = require('express');
const Stripe = require('stripe');
const stripe = Stripe(process.env.STRIPE_SKEY);
const router = express.Router();
router.post('/api/stripe', (req, res) => {
  const { stripeToken, stripeEmail } = req.body;
  stripe.charges.create({ amount: 395, currency: 'usd', source: stripeToken, description: stripeEmail }, (err) => {
    if (err) return res.redirect('/api/stripe');
    res.redirect('/api/stripe');
  });
});
module.exports = router;
`;
    const post: WiringTarget = { action: 'postStripe', codeName: 'postStripe', trigger: 'http', method: 'POST', path: '/api/stripe', file: 'routes.js', line: 5, scope: 'global', provider: 'stripe' };
    const out = wireSource('routes.js', routes, [post], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("description: stripeEmail }, stripeRequestOptions(idempotencyContext), (err) => {");
    expect(out.edits.map((e) => e.summary).join('\n')).toMatch(/passes the derived Stripe idempotency key to stripe\.charges\.create \(line \d+\)/);
    const again = wireSource('routes.js', out.text, [post], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
  });
});

describe('apply on Stripe creates whose parameters are no literal (stripe-samples/accept-a-payment@1a57c3b2)', () => {
  it('keys create(params) after `let params` set in branches, and create() with none, each with its own step', () => {
    const routes = `const express = require('express');
const Stripe = require('stripe');
const stripe = Stripe(process.env.STRIPE_SKEY);
const app = express();
app.post('/create-payment-intent', async (req, res) => {
  let params;
  if (req.body.tax) params = { amount: 6299, currency: 'usd' };
  else params = { amount: 5999, currency: 'usd' };
  params.customer = req.body.customerId || (await stripe.customers.create()).id;
  const paymentIntent = await stripe.paymentIntents.create(params);
  res.send({ clientSecret: paymentIntent.client_secret });
});
module.exports = app;
`;
    const post: WiringTarget = { action: 'createPaymentIntent', codeName: 'createPaymentIntent', trigger: 'http', method: 'POST', path: '/create-payment-intent', file: 'server.js', line: 5, scope: 'global', provider: 'stripe' };
    const out = wireSource('server.js', routes, [post], options);
    expect(out.stale).toEqual([]);
    expect(out.manual.filter((m) => m.reason.includes('not an object literal'))).toEqual([]);
    expect(out.text).toContain('(await stripe.customers.create({}, stripeRequestOptions(idempotencyContext, 0))).id;');
    expect(out.text).toContain('await stripe.paymentIntents.create(params, stripeRequestOptions(idempotencyContext, 1));');
    const again = wireSource('server.js', out.text, [post], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
  });
});

describe("apply on Express's route chain (bradtraversy/proshop_mern@1d20b5b orderRoutes.js)", () => {
  it("puts the middleware before the handler of the chain's method call, and leaves the chain's other methods alone", () => {
    const routes = `import express from 'express'
const router = express.Router()
import { addOrderItems, getOrders } from '../controllers/orderController.js'
import { protect, admin } from '../middleware/authMiddleware.js'

router.route('/').post(protect, addOrderItems).get(protect, admin, getOrders)
router.route('/:id/pay').put(protect, addOrderItems)

export default router
`;
    const post: WiringTarget = { action: 'addOrderItems', codeName: 'addOrderItems', trigger: 'http', method: 'POST', path: '/api/orders', file: 'routes.js', line: 6, scope: 'global' };
    const out = wireSource('routes.js', routes, [post], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("router.route('/').post(protect, idempotency.addOrderItems, addOrderItems).get(protect, admin, getOrders)\n");
    expect(out.text).toContain("router.route('/:id/pay').put(protect, addOrderItems)\n");
    const again = wireSource('routes.js', out.text, [post], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
  });
});
