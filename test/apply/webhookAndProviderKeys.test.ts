import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const options: WireSourceOptions = {
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', 'providers', 'webhooks/webhooks']),
};
const target = (file: string, line: number, extra: Partial<WiringTarget>): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'global', ...extra });

function expectIdempotent(file: string, text: string, targets: WiringTarget[]): void {
  const again = wireSource(file, text, targets, { ...options, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

describe('Adyen and PayPal calls in wired routes', () => {
  const file = 'src/routes/payments.ts';
  it('Adyen: the derived key goes into the request options, the merchant reference stays', () => {
    const source = `import { Client, CheckoutAPI } from '@adyen/api-library';
import { Router } from 'express';

const checkout = new CheckoutAPI(new Client({ apiKey: 'k', environment: 'TEST' }));
export const router = Router();

router.post('/payments', async (req, res) => {
  const result = await checkout.PaymentsApi.payments({ amount: { currency: 'EUR', value: 1000 }, reference: req.body.orderId, merchantAccount: 'm', paymentMethod: req.body.paymentMethod, returnUrl: 'https://x' });
  res.status(201).json(result);
});
`;
    const out = wireSource(file, source, [target(file, 7, { provider: 'adyen' })], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { adyenIdempotency } from '../idempotency/providers.js';");
    expect(out.text).toContain('const idempotencyContext = idempotencyOf(req);');
    expect(out.text).toContain("returnUrl: 'https://x' }, { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey });");
    expect(out.text).toContain('reference: req.body.orderId');
    expect(out.edits.map((e) => e.summary).join('\n')).toContain('derived adyen idempotency key');
    expectIdempotent(file, out.text, [target(file, 7, { provider: 'adyen' })]);
    // An id before the request (a pspReference) is not the request: the options go after the request literal.
    const modification = source.replace(/checkout\.PaymentsApi\.payments\(\{[^\n]*\}\);/, "checkout.ModificationsApi.captureAuthorisedPayment(pspReference, { amount: { currency: 'EUR', value: 1000 }, merchantAccount: 'm' });");
    const captured = wireSource(file, modification, [target(file, 7, { provider: 'adyen' })], options);
    expect(captured.text).toContain("captureAuthorisedPayment(pspReference, { amount: { currency: 'EUR', value: 1000 }, merchantAccount: 'm' }, { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey });");
  });

  it('PayPal: paypalRequestId (the PayPal-Request-Id header) joins the request that holds the body', () => {
    const source = `import { Client, OrdersController } from '@paypal/paypal-server-sdk';
import { Router } from 'express';

const orders = new OrdersController(new Client({}));
export const router = Router();

router.post('/payments', async (req, res) => {
  const { result } = await orders.createOrder({ body: { intent: 'CAPTURE', purchaseUnits: [] }, prefer: 'return=minimal' });
  res.status(201).json(result);
});
`;
    const out = wireSource(file, source, [target(file, 7, { provider: 'paypal' })], options);
    expect(out.text).toContain("import { paypalRequestId } from '../idempotency/providers.js';");
    expect(out.text).toMatch(/prefer: 'return=minimal',\s*paypalRequestId: paypalRequestId\(idempotencyContext\)/);
    expectIdempotent(file, out.text, [target(file, 7, { provider: 'paypal' })]);
  });
});

describe('Stripe webhooks that verify the signature themselves', () => {
  const file = 'src/webhooks.ts';
  const hook = (line: number): WiringTarget => ({ action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', method: 'POST', path: '/webhooks/stripe', file, line, provider: 'stripe', scope: 'global' });
  const source = `import express from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const app = express();

app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), async (req, res) => {
  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');
  switch (event.type) {
    case 'checkout.session.completed':
      await fulfil(event.data.object);
      break;
  }
  res.json({ received: true });
});
`;

  it('wraps the handling between the signature check and the answer in onceForEvent', () => {
    const out = wireSource(file, source, [hook(7)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { onceForEvent } from './idempotency/webhookEvent.js';");
    expect(out.text).toContain(`  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');
  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    switch (event.type) {
      case 'checkout.session.completed':
        await fulfil(event.data.object);
        break;
    }
  });
  if (answered) {
    res.status(answered.status).set(answered.headers).send(answered.body);
    return;
  }
  res.json({ received: true });`);
    expectIdempotent(file, out.text, [hook(7)]);
  });

  it('leaves handling that answers by itself to the user, and other webhooks to the route transform', () => {
    const answering = source.replace('      await fulfil(event.data.object);\n', '      await fulfil(event.data.object);\n      res.json({ ok: 1 });\n      return;\n');
    const out = wireSource(file, answering, [hook(7)], options);
    expect(out.text).toBe(answering);
    expect(out.manual[0]?.reason).toContain('answers or returns by itself');
    const unverified = source.replace("const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');", 'const event = JSON.parse(req.body);');
    const fallback = wireSource(file, unverified, [hook(7)], options);
    expect(fallback.manual[0]?.reason).toContain('raw body');
  });
});

describe('Stripe webhooks whose whole body is one try/catch', () => {
  const hook = (file: string, line: number): WiringTarget => ({ action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', method: 'POST', path: '/webhooks/stripe', file, line, provider: 'stripe', scope: 'global' });

  it('Express: the dedupe goes inside the try after the signature check; the catch still answers a bad signature', () => {
    const file = 'src/webhooks.ts';
    const source = `import express from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const app = express();

app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), async (req, res) => {
  try {
    const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');
    if (event.type === 'checkout.session.completed') {
      await fulfil(event.data.object);
    }
    res.json({ received: true });
  } catch (err) {
    res.status(400).send(\`Webhook Error: \${(err as Error).message}\`);
  }
});
`;
    const out = wireSource(file, source, [hook(file, 7)], options);
    expect(out.stale).toEqual([]);
    expect(out.manual).toEqual([]);
    expect(out.text).toContain(`  try {
    const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');
    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      if (event.type === 'checkout.session.completed') {
        await fulfil(event.data.object);
      }
    });
    if (answered) {
      res.status(answered.status).set(answered.headers).send(answered.body);
      return;
    }
    res.json({ received: true });
  } catch (err) {
    res.status(400).send(\`Webhook Error: \${(err as Error).message}\`);
  }`);
    expect(out.edits.map((e) => e.summary)).toContain('runs the Stripe event handling of POST /webhooks/stripe once per event id (onceForEvent), after the signature check');
    expectIdempotent(file, out.text, [hook(file, 7)]);

    // A try that holds only the check keeps the handling after the try/catch, where the event is assigned.
    const checkOnly = `import express from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const app = express();

app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), async (req, res) => {
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] as string, 'whsec');
  } catch {
    res.status(400).send('bad signature');
    return;
  }
  await fulfil(event);
  res.json({ received: true });
});
`;
    const outside = wireSource(file, checkOnly, [hook(file, 7)], options);
    expect(outside.text).toContain(`    return;
  }
  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    await fulfil(event);
  });`);

    // The try also logs the event after the check (Zukashi/e-commerce-food's NestJS controller): the handling is still
    // the code after the try/catch, and the log stays where it is.
    const logged = checkOnly.replace("'whsec');\n  } catch", "'whsec');\n    console.log(event);\n  } catch");
    const afterLog = wireSource(file, logged, [hook(file, 7)], options);
    expect(afterLog.text).toContain(`    console.log(event);
  } catch {`);
    expect(afterLog.text).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    await fulfil(event);
  });`);
    expectIdempotent(file, afterLog.text, [hook(file, 7)]);
    // Handling in both places has no single spot to wrap: a step says so, nothing is edited.
    const split = checkOnly.replace("'whsec');\n  } catch", "'whsec');\n    await record(event);\n  } catch");
    const both = wireSource(file, split, [hook(file, 7)], options);
    expect(both.text).toBe(split);
    expect(both.manual.map((m) => m.reason).join('\n')).toContain('the event is handled both inside the try block that checks its signature (line 11) and after it (line 16)');
  });

  it('Hono: the same inside the try; the handling answering by itself inside the try stays manual', () => {
    const file = 'src/app.ts';
    const source = `import { Hono } from 'hono';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const app = new Hono();

app.post('/webhooks/stripe', async (c) => {
  try {
    const event = await stripe.webhooks.constructEventAsync(await c.req.text(), c.req.header('stripe-signature') ?? '', 'whsec');
    await fulfil(event);
    return c.json({ received: true });
  } catch (err) {
    console.error(err);
    return c.text('invalid signature', 400);
  }
});
`;
    const hono = { ...options, framework: 'hono' as const };
    const out = wireSource(file, source, [hook(file, 7)], hono);
    expect(out.manual).toEqual([]);
    expect(out.text).toContain(`  try {
    const event = await stripe.webhooks.constructEventAsync(await c.req.text(), c.req.header('stripe-signature') ?? '', 'whsec');
    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      await fulfil(event);
    });
    if (answered) {
      return new Response(answered.body, { status: answered.status, headers: answered.headers });
    }
    return c.json({ received: true });
  } catch (err) {
    console.error(err);
    return c.text('invalid signature', 400);
  }`);
    const again = wireSource(file, out.text, [hook(file, 7)], { ...hono, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);

    const answering = source.replace('    await fulfil(event);\n', "    if (event.type !== 'checkout.session.completed') return c.json({ ignored: true });\n    await fulfil(event);\n");
    const manual = wireSource(file, answering, [hook(file, 7)], hono);
    expect(manual.text).toBe(answering);
    expect(manual.manual[0]?.reason).toContain('answers or returns by itself');
  });
});

describe('Stripe webhooks verified in a NestJS controller, a Fastify route, a Next.js route handler', () => {
  const hook = (file: string, line: number, path = '/webhooks/stripe'): WiringTarget => ({ action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', method: 'POST', path, file, line, provider: 'stripe', scope: 'global' });

  it('NestJS: wraps the handling in the controller method; a non-2xx answer is thrown as an HttpException', () => {
    const file = 'src/webhooks.controller.ts';
    const source = `import { Controller, Headers, Post, Req, type RawBodyRequest } from '@nestjs/common';
import type { Request } from 'express';
import Stripe from 'stripe';

@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly stripe: Stripe, private readonly orders: { fulfil(id: string): Promise<void> }) {}

  @Post('stripe')
  async stripeEvent(@Req() req: RawBodyRequest<Request>, @Headers('stripe-signature') signature: string) {
    const event = this.stripe.webhooks.constructEvent(req.rawBody!, signature, 'whsec');
    if (event.type === 'checkout.session.completed') {
      await this.orders.fulfil(event.data.object.id);
    }
    return { received: true };
  }
}
`;
    const nest = { ...options, framework: 'nestjs' as const };
    const out = wireSource(file, source, [hook(file, 10)], nest);
    expect(out.manual).toEqual([]);
    expect(out.text).toContain("import { Controller, Headers, Post, Req, type RawBodyRequest, HttpException } from '@nestjs/common';");
    expect(out.text).toContain(`    const event = this.stripe.webhooks.constructEvent(req.rawBody!, signature, 'whsec');
    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      if (event.type === 'checkout.session.completed') {
        await this.orders.fulfil(event.data.object.id);
      }
    });
    if (answered && answered.status >= 300) {
      throw new HttpException(answered.body, answered.status);
    }
    return { received: true };`);
    // Never the request interceptor: a webhook is keyed by its event id.
    expect(out.text).not.toContain('@Idempotent');
    expectIdempotent(file, out.text, [hook(file, 10)]);
    const unverified = source.replace("this.stripe.webhooks.constructEvent(req.rawBody!, signature, 'whsec')", 'JSON.parse(String(req.rawBody))');
    const manual = wireSource(file, unverified, [hook(file, 10)], nest);
    expect(manual.text).toBe(unverified);
    expect(manual.manual[0]?.reason).toContain("keyed by the provider's event id");
  });

  it('Fastify: a handler without a named reply, and one with no statements to wrap, are left manual and untouched', () => {
    const file = 'src/webhook.ts';
    const source = `import Fastify from 'fastify';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const app = Fastify();

app.post('/webhooks/stripe', async (request) => {
  const event = stripe.webhooks.constructEvent(request.body as Buffer, String(request.headers['stripe-signature']), 'whsec');
  await handle(event);
  return { received: true };
});
`;
    const fastify = { ...options, framework: 'fastify' as const };
    const noReply = wireSource(file, source, [hook(file, 7)], fastify);
    expect(noReply.text).toBe(source);
    expect(noReply.manual[0]?.reason).toContain('no named reply parameter');
    const empty = source.replace('async (request) =>', 'async (request, reply) =>').replace('  await handle(event);\n', '');
    const nothing = wireSource(file, empty, [hook(file, 7)], fastify);
    expect(nothing.text).toBe(empty);
    expect(nothing.manual[0]?.reason).toContain('no statements between the signature check and the answer');
  });

  it('Next.js: an exported const route handler is wrapped too; a handler that answers inside the handling is left manual', () => {
    const file = 'app/api/webhooks/stripe/route.ts';
    const source = `import Stripe from 'stripe';

const stripe = new Stripe('sk');

export const POST = async (request: Request) => {
  const event = await stripe.webhooks.constructEventAsync(await request.text(), request.headers.get('stripe-signature') ?? '', 'whsec');
  await fulfil(event);
  return new Response(null, { status: 204 });
};
`;
    const next = { ...options, framework: 'nextjs' as const };
    const out = wireSource(file, source, [hook(file, 5, '/api/webhooks/stripe')], next);
    expect(out.text).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    await fulfil(event);
  });
  if (answered) {
    return new Response(answered.body, { status: answered.status, headers: answered.headers });
  }
  return new Response(null, { status: 204 });`);
    expectIdempotent(file, out.text, [hook(file, 5, '/api/webhooks/stripe')]);
    const answering = source.replace('  await fulfil(event);\n', "  if (event.type === 'x') return new Response('ignored');\n  await fulfil(event);\n");
    const manual = wireSource(file, answering, [hook(file, 5, '/api/webhooks/stripe')], next);
    expect(manual.text).toBe(answering);
    expect(manual.manual[0]?.reason).toContain('answers or returns by itself');
  });
});

describe('Adyen and PayPal webhooks that verify the delivery themselves', () => {
  const file = 'src/webhooks.ts';
  const hook = (provider: string, line: number): WiringTarget => ({ action: `${provider}Webhook`, codeName: `${provider}Webhook`, trigger: 'webhook', method: 'POST', path: `/webhooks/${provider}`, file, line, provider, scope: 'global' });
  const withVerify: WireSourceOptions = { ...options, scaffoldModules: new Set([...options.scaffoldModules, 'webhooks/verify']) };
  const adyen = `import { hmacValidator } from '@adyen/api-library';
import express from 'express';

const validator = new hmacValidator();
export const app = express();

app.post('/webhooks/adyen', express.json(), async (req, res) => {
  for (const { NotificationRequestItem: item } of req.body.notificationItems) {
    if (!validator.validateHMAC(item, 'key')) {
      res.status(401).end();
      return;
    }
    await record(item.pspReference, item.eventCode);
  }
  res.send('[accepted]');
});
`;
  const paypal = `import express from 'express';

export const app = express();

app.post('/webhooks/paypal', express.raw({ type: 'application/json' }), async (req, res) => {
  const event = JSON.parse(req.body.toString());
  if (!(await verifyWebhookSignature(req.headers, event))) {
    res.sendStatus(400);
    return;
  }
  if (event.event_type === 'PAYMENT.CAPTURE.COMPLETED') await capture(event.resource.id);
  res.sendStatus(200);
});
`;

  it('Adyen: each verified item of the batch runs once, keyed by adyenEventOf(item); a duplicate keeps the route\u2019s "[accepted]"', () => {
    const out = wireSource(file, adyen, [hook('adyen', 7)], withVerify);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { adyenEventOf } from './idempotency/webhooks/verify.js';");
    expect(out.text).toContain(`    const answered = await onceForEvent(ACTIONS.adyenWebhook, 'adyen', adyenEventOf(item), async () => {
      await record(item.pspReference, item.eventCode);
    });
    if (answered && answered.status >= 300) {
      res.status(answered.status).set(answered.headers).send(answered.body);
      return;
    }
  }
  res.send('[accepted]');`);
    expect(out.edits[0]?.summary).toContain('once per notification item');
    expectIdempotent(file, out.text, [hook('adyen', 7)]);
  });

  it('PayPal: the handling after the check and the event runs once, keyed by paypalEventOf(event)', () => {
    const out = wireSource(file, paypal, [hook('paypal', 5)], withVerify);
    expect(out.text).toContain("import { paypalEventOf } from './idempotency/webhooks/verify.js';");
    expect(out.text).toContain(`  const answered = await onceForEvent(ACTIONS.paypalWebhook, 'paypal', paypalEventOf(event), async () => {
    if (event.event_type === 'PAYMENT.CAPTURE.COMPLETED') await capture(event.resource.id);
  });`);
    expectIdempotent(file, out.text, [hook('paypal', 5)]);
  });

  it('Adyen: a check that guards the handling (if (validateHMAC(…)) { handle; 202 } else { 401 }) wraps the guarded branch', () => {
    // adyen-examples/adyen-node-online-payments@1ad09b5, checkout-example-advanced/index.js.
    const guarded = `import { hmacValidator } from '@adyen/api-library';
import express from 'express';

export const app = express();

app.post('/webhooks/adyen', async (req, res) => {
  const validator = new hmacValidator();
  const notification = req.body.notificationItems[0].NotificationRequestItem;
  if (validator.validateHMAC(notification, process.env.ADYEN_HMAC_KEY)) {
    consumeEvent(notification);
    res.status(202).send();
  } else {
    res.status(401).send('Invalid HMAC signature');
  }
});
`;
    const out = wireSource(file, guarded, [hook('adyen', 6)], withVerify);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain(`  if (validator.validateHMAC(notification, process.env.ADYEN_HMAC_KEY)) {
    const answered = await onceForEvent(ACTIONS.adyenWebhook, 'adyen', adyenEventOf(notification), async () => {
      consumeEvent(notification);
    });
    if (answered && answered.status >= 300) {
      res.status(answered.status).set(answered.headers).send(answered.body);
      return;
    }
    res.status(202).send();
  } else {`);
    expectIdempotent(file, out.text, [hook('adyen', 6)]);
    // Negated, the guarded branch is the refusal: the handling after the if is wrapped as before (the batch test above).
  });

  it('leaves an item loop that continues, a scaffold without verify.ts, and an unverified route to the user', () => {
    const continuing = adyen.replace('    await record(', "    if (item.eventCode === 'REPORT_AVAILABLE') continue;\n    await record(");
    const loop = wireSource(file, continuing, [hook('adyen', 7)], withVerify);
    expect(loop.text).toBe(continuing);
    expect(loop.manual[0]?.reason).toContain('leaves the loop');
    const noVerify = wireSource(file, paypal, [hook('paypal', 5)], options);
    expect(noVerify.text).toBe(paypal);
    expect(noVerify.manual[0]?.reason).toContain('no webhooks/verify.ts');
    const unverified = wireSource(file, paypal.replace('verifyWebhookSignature(req.headers, event)', 'true'), [hook('paypal', 5)], withVerify);
    expect(unverified.edits).toEqual([]);
    expect(unverified.manual[0]?.reason).toContain('event id');
  });
});

describe('a Stripe webhook verified by its route middleware (cgarrovillo/ecommerce@30efd95 verifyStripeSign.ts)', () => {
  const file = 'src/webhooks.ts';
  const source = `import express, { type NextFunction, type Request, type Response } from 'express';
import Stripe from 'stripe';
import { fulfil } from './orders.js';

const stripe = new Stripe(process.env.STRIPE_KEY ?? '');
export const router = express.Router();

function verifyStripe(req: Request & { stripeEvent?: Stripe.Event }, res: Response, next: NextFunction) {
  try {
    const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'] ?? '', process.env.WHSEC ?? '');
    req.stripeEvent = event;
    next();
  } catch {
    res.status(400).send('bad signature');
  }
}

router.post('/webhooks/stripe', express.raw({ type: 'application/json' }), verifyStripe, async (req: Request & { stripeEvent?: Stripe.Event }, res) => {
  const event = req.stripeEvent as Stripe.Event;
  if (event.type === 'checkout.session.completed') await fulfil(event.data.object);
  res.json({ received: true });
});
`;
  const hook: WiringTarget = { action: 'handleStripeWebhook', codeName: 'handleStripeWebhook', trigger: 'webhook', method: 'POST', path: '/webhooks/stripe', file, line: 18, provider: 'stripe', keySource: 'derived' };

  it('reads the property the middleware sets after constructEvent, and dedupes the handling after the handler reads the event', async () => {
    const { middlewareVerifiedEvents } = await import('../../src/apply/transforms/webhook.js');
    const verifiedEvents = middlewareVerifiedEvents([source]);
    expect([...verifiedEvents]).toEqual(['stripeEvent']);
    const withEvents = { ...options, verifiedEvents, scaffoldModules: new Set([...options.scaffoldModules, 'webhookEvent']) };
    const out = wireSource(file, source, [hook], withEvents);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("  const event = req.stripeEvent as Stripe.Event;\n  const answered = await onceForEvent(ACTIONS.handleStripeWebhook, 'stripe', event, async () => {\n    if (event.type === 'checkout.session.completed') await fulfil(event.data.object);\n  });\n");
    expect(out.edits.map((e) => e.summary)).toContain("runs the Stripe event handling of POST /webhooks/stripe once per event id (onceForEvent), after the route's middleware verified the delivery");
    const again = wireSource(file, out.text, [hook], { ...withEvents, anyLine: true });
    expect(again.text).toBe(out.text);
    // Without the middleware's assignment nothing says the event was verified: left to the user, as before.
    const unverified = wireSource(file, source, [hook], { ...withEvents, verifiedEvents: new Set() });
    expect(unverified.text).not.toContain('onceForEvent');
  });
});
