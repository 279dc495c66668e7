import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyNamedHandlers } from '../../src/apply/namedHandlers.js';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';
import { ROOT } from './fixtureApp.js';

const MODULES = new Set(['index', 'instance', 'providers']);
const IMPORTS = { aliases: [], defaultExtension: '.js' } as const;
const target = (file: string, line: number): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'global', provider: 'stripe' });

const TSCONFIG = JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, baseUrl: '.', paths: { '@/*': ['src/*'] } }, include: ['src'] });
const STRIPE = "import Stripe from 'stripe';\n\nexport const stripe = new Stripe('sk_test');\n";

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

/** A small project on disk (inside the repo, so `stripe` resolves), its route file wired as the route pass would. */
async function project(files: Record<string, string>, route: string, t: WiringTarget, framework: WireSourceOptions['framework']) {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const root = await mkdtemp(path.join(ROOT, '.tmp', 'named-'));
  dirs.push(root);
  // '' leaves a file out (a JavaScript project without a tsconfig.json).
  for (const [file, text] of Object.entries({ 'tsconfig.json': TSCONFIG, 'src/stripe.ts': STRIPE, ...files }).filter(([, text]) => text !== '')) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  const before = files[route]!;
  const wired = wireSource(route, before, [t], { framework, scaffoldDir: 'src/idempotency', imports: IMPORTS, scaffoldModules: MODULES });
  const input = { root, framework, targets: [t], texts: new Map([[route, { before, after: wired.text }]]), anyLine: () => false, scaffoldDir: 'src/idempotency', imports: IMPORTS, scaffoldModules: MODULES };
  return { root, wired, input, out: await keyNamedHandlers(input) };
}

describe('keyNamedHandlers: provider calls in handlers a route passes by name', () => {
  it('Koa, a function declared further down the route file: keyed from its own ctx, on top of the route pass', async () => {
    const route = 'src/routes.ts';
    const source = `import Router from '@koa/router';
import type { Context } from 'koa';
import { stripe } from './stripe.js';

export const router = new Router();

router.post('/payments', createPayment);

async function createPayment(ctx: Context) {
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
  ctx.body = intent;
}
`;
    const { out, input } = await project({ [route]: source }, route, target(route, 7), 'koa');
    expect(out.manual).toEqual([]);
    const text = out.texts.get(route)!;
    expect(text).toContain("router.post('/payments', idempotency.createPayment, createPayment);");
    expect(text).toContain('async function createPayment(ctx: Context) {\n  const idempotencyContext = idempotencyOf(ctx);\n');
    expect(text).toContain("{ amount: 100, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    // A second pass over its own output changes nothing.
    await writeFile(path.join(input.root, route), text);
    const again = await keyNamedHandlers({ ...input, texts: new Map([[route, { before: text, after: text }]]), anyLine: () => true });
    expect(again.texts.size).toBe(0);
    expect(again.edits).toEqual([]);
  });

  it('Hono, an arrow function imported through a tsconfig path alias: keyed in its own file from c', async () => {
    const route = 'src/app.ts';
    const handlers = 'src/handlers/payments.ts';
    const { out } = await project(
      {
        [route]: `import { Hono } from 'hono';\nimport { createPayment } from '@/handlers/payments';\n\nexport const app = new Hono();\n\napp.post('/payments', createPayment);\n`,
        [handlers]: `import type { Context } from 'hono';\nimport { stripe } from '../stripe.js';\n\nexport const createPayment = async (c: Context) => {\n  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });\n  return c.json(intent, 201);\n};\n`,
      },
      route,
      target(route, 6),
      'hono',
    );
    expect(out.manual).toEqual([]);
    expect([...out.texts.keys()]).toEqual([handlers]);
    expect(out.texts.get(handlers)).toContain('export const createPayment = async (c: Context) => {\n  const idempotencyContext = idempotencyOf(c);\n');
    expect(out.texts.get(handlers)).toContain("import { idempotencyOf } from '../idempotency/index.js';");
  });

  it('Fastify, a property of a handlers object: keyed from its request', async () => {
    const route = 'src/routes.ts';
    const handlers = 'src/handlers.ts';
    const { out, wired } = await project(
      {
        [route]: `import Fastify from 'fastify';\nimport { paymentHandlers } from './handlers.js';\n\nexport const app = Fastify();\n\napp.post('/payments', paymentHandlers.create);\n`,
        [handlers]: `import type { FastifyReply, FastifyRequest } from 'fastify';\nimport { stripe } from './stripe.js';\n\nexport const paymentHandlers = {\n  create: async (request: FastifyRequest, reply: FastifyReply) => {\n    const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });\n    return reply.code(201).send(intent);\n  },\n};\n`,
      },
      route,
      target(route, 6),
      'fastify',
    );
    expect(wired.text).toContain('idempotency.createPayment');
    expect(out.manual).toEqual([]);
    expect(out.texts.get(handlers)).toContain('  create: async (request: FastifyRequest, reply: FastifyReply) => {\n    const idempotencyContext = idempotencyOf(request);\n');
  });

  it('CommonJS without a tsconfig: `exports.createPaymentIntent = async (req, res) => …` used as controller.createPaymentIntent', async () => {
    const route = 'src/routes.js';
    const controller = 'src/controllers/payment.js';
    const { out } = await project(
      {
        'tsconfig.json': '',
        'src/stripe.ts': '',
        [route]: `const express = require('express');\nconst paymentController = require('./controllers/payment');\n\nconst router = express.Router();\nrouter.post('/payments', paymentController.createPaymentIntent);\n\nmodule.exports = router;\n`,
        [controller]: `const stripe = require('stripe')(process.env.STRIPE_SECRET_KEY);\n\nexports.createPaymentIntent = async (req, res) => {\n  const paymentIntent = await stripe.paymentIntents.create({ amount: req.body.amount, currency: 'usd' });\n  res.json({ clientSecret: paymentIntent.client_secret });\n};\n`,
      },
      route,
      target(route, 5),
      'express',
    );
    expect(out.manual).toEqual([]);
    const text = out.texts.get(controller)!;
    expect(text).toContain('exports.createPaymentIntent = async (req, res) => {\n  const idempotencyContext = idempotencyOf(req);\n');
    expect(text).toContain("currency: 'usd' }, stripeRequestOptions(idempotencyContext));");
    expect(text).toMatch(/const \{ idempotencyOf \} = require\(/);
  });

  it("CommonJS, a handler assigned to an undeclared global (`checkout = async (req, res) => …`, Henry's Final Project)", async () => {
    const route = 'src/routes.js';
    const controller = 'src/controllers/stripe.controller.js';
    const files = {
      'tsconfig.json': '',
      'src/stripe.ts': '',
      [route]: `const express = require('express');\nconst checkout = require('./controllers/stripe.controller');\n\nconst router = express.Router();\nrouter.post('/payments', checkout);\n\nmodule.exports = router;\n`,
      [controller]: `const { Stripe } = require('stripe');\nconst stripe = new Stripe(process.env.STRIPE_SECRET);\n\ncheckout = async (req, res) => {\n  const payment = await stripe.paymentIntents.create({ amount: req.body.amount, currency: 'usd', confirm: true });\n  res.send(payment.id);\n};\n\nmodule.exports = checkout;\n`,
    };
    const { out } = await project(files, route, target(route, 5), 'express');
    expect(out.manual).toEqual([]);
    const text = out.texts.get(controller)!;
    expect(text).toContain('checkout = async (req, res) => {\n  const idempotencyContext = idempotencyOf(req);\n');
    expect(text).toContain("confirm: true }, stripeRequestOptions(idempotencyContext));");
    // The same through `module.exports = { checkout }` and a destructured require.
    const destructured = {
      ...files,
      [route]: files[route].replace("const checkout = require('./controllers/stripe.controller');", "const { checkout } = require('./controllers/stripe.controller');"),
      [controller]: files[controller].replace('module.exports = checkout;', 'module.exports = { checkout };'),
    };
    const again = await project(destructured, route, target(route, 5), 'express');
    expect(again.out.manual).toEqual([]);
    expect(again.out.texts.get(controller)).toContain('stripeRequestOptions(idempotencyContext)');
  });

  it('leaves a handler reached through a symlink out of the project as a manual step, and edits nothing', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'named-outside-'));
    dirs.push(outside);
    await writeFile(path.join(outside, 'payments.ts'), `import type { Request, Response } from 'express';\n\nexport async function createPayment(req: Request, res: Response) {\n  res.sendStatus(201);\n}\n`);
    const route = 'src/routes.ts';
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const { out } = await project(
      { [route]: `import { Router } from 'express';\nimport { createPayment } from './linked/payments.js';\n\nexport const router = Router();\n\nrouter.post('/payments', createPayment);\n` },
      route,
      target(route, 6),
      'express',
    ).then(async (first) => {
      // The link is made after the walk's tree exists; run the pass again with it in place.
      await symlink(outside, path.join(first.root, 'src/linked'));
      return { out: await keyNamedHandlers(first.input) };
    });
    expect(out.texts.size).toBe(0);
    expect(out.manual).toEqual([expect.objectContaining({ reason: expect.stringContaining('not among the project\'s own files') })]);
  });
});

describe('keyNamedHandlers: handlers it must not key alone', () => {
  it('Express, one asyncHandler-wrapped handler on two actions: neither is keyed, each gets the step naming the other route', async () => {
    const route = 'src/routes.ts';
    const controller = 'src/controllers/checkout.ts';
    const source = `import { Router } from 'express';\nimport { checkout } from './controllers/checkout.js';\n\nexport const router = Router();\n\nrouter.post('/payments', checkout);\nrouter.post('/checkout', checkout);\n`;
    const controllerSource = `import type { NextFunction, Request, Response } from 'express';\nimport { stripe } from '../stripe.js';\n\nconst asyncHandler = (fn: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => void fn(req, res).catch(next);\n\nexport const checkout = asyncHandler(async (req, res) => {\n  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });\n  res.status(201).json(intent);\n});\n`;
    const payments = target(route, 6);
    const second: WiringTarget = { ...payments, action: 'checkout', codeName: 'checkout', path: '/checkout', line: 7 };
    const first = await project({ [route]: source, [controller]: controllerSource }, route, payments, 'express');
    const wired = wireSource(route, source, [payments, second], { framework: 'express', scaffoldDir: 'src/idempotency', imports: IMPORTS, scaffoldModules: MODULES });
    const out = await keyNamedHandlers({ ...first.input, targets: [payments, second], texts: new Map([[route, { before: source, after: wired.text }]]) });
    expect(out.texts.size).toBe(0);
    expect(out.manual.map((m) => [m.action, m.file])).toEqual([['createPayment', controller], ['checkout', controller]]);
    expect(out.manual[0]!.reason).toContain(`also used at ${route}:7`);
    expect(out.manual[1]!.reason).toContain(`also used at ${route}:6`);

    // The same wrapped handler on one route only is followed into the function the wrapper is given.
    const single = source.replace("router.post('/checkout', checkout);\n", '');
    await writeFile(path.join(first.root, route), single);
    const after = wireSource(route, single, [payments], { framework: 'express', scaffoldDir: 'src/idempotency', imports: IMPORTS, scaffoldModules: MODULES }).text;
    const alone = await keyNamedHandlers({ ...first.input, texts: new Map([[route, { before: single, after }]]) });
    expect(alone.manual).toEqual([]);
    expect(alone.texts.get(controller)).toContain('export const checkout = asyncHandler(async (req, res) => {\n  const idempotencyContext = idempotencyOf(req);\n');
  });
});

const WEBHOOK_MODULES = new Set([...MODULES, 'webhooks/webhooks']);
const hook = (file: string, line: number): WiringTarget => ({ action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', method: 'POST', path: '/webhooks/stripe', file, line, scope: 'global', provider: 'stripe' });

describe('keyNamedHandlers: verified webhook handlers a route passes by name', () => {
  it('Fastify, a function declared further down the route file: its event handling runs once per event id, and a second pass changes nothing', async () => {
    const route = 'src/webhook.ts';
    const source = `import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { stripe } from './stripe.js';

export const app = Fastify();

app.post('/webhooks/stripe', handleStripeEvent);

async function handleStripeEvent(request: FastifyRequest, reply: FastifyReply) {
  const event = stripe.webhooks.constructEvent(request.body as Buffer, String(request.headers['stripe-signature']), 'whsec');
  console.log(event.type);
  return reply.send({ received: true });
}
`;
    const t = hook(route, 6);
    const { out, input, wired } = await project({ [route]: source }, route, t, 'fastify');
    // The route pass alone says it cannot see the handler; the named pass supersedes that step.
    expect(wired.manual).toEqual([expect.objectContaining({ reason: expect.stringContaining('the webhook route passes its handler by name (handleStripeEvent)') })]);
    const named = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES });
    expect(out.manual).toEqual([expect.objectContaining({ reason: expect.stringContaining('no webhooks/webhooks.ts') })]);
    expect(named.manual).toEqual([]);
    expect([...named.webhooks]).toEqual(['stripeWebhook']);
    const text = named.texts.get(route)!;
    expect(text).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    console.log(event.type);
  });
  if (answered) {
    return reply.code(answered.status).headers(answered.headers).send(answered.body);
  }
  return reply.send({ received: true });`);
    expect(text).toContain("app.post('/webhooks/stripe', handleStripeEvent);");
    await writeFile(path.join(input.root, route), text);
    const again = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES, texts: new Map([[route, { before: text, after: text }]]), anyLine: () => true });
    expect(again.texts.size).toBe(0);
    expect(again.manual).toEqual([]);
  });

  it('Express, a controller default-exporting an object of handlers: followed through `{ stripe: handleStripe }`; handling inside the try of the check is wrapped there, the catch kept', async () => {
    const route = 'src/routes.ts';
    const controller = 'src/controllers/webhook.controller.ts';
    const { out: noScaffold, input } = await project(
      {
        [route]: `import express from 'express';\nimport webhookController from './controllers/webhook.controller.js';\n\nexport const router = express.Router();\n\nrouter.post('/webhooks/stripe', express.raw({ type: 'application/json' }), webhookController.stripe);\n`,
        [controller]: `import type { Request, Response } from 'express';\nimport { stripe } from '../stripe.js';\n\nconst handleStripe = async (req: Request, res: Response) => {\n  try {\n    const event = stripe.webhooks.constructEvent(req.body, req.get('stripe-signature') ?? '', 'whsec');\n    console.log(event.id);\n    res.json({ received: true });\n  } catch (error) {\n    res.status(400).send(String(error));\n  }\n};\n\nexport default { stripe: handleStripe };\n`,
      },
      route,
      hook(route, 6),
      'express',
    );
    expect(noScaffold.manual).toEqual([{ action: 'stripeWebhook', file: controller, line: 4, reason: expect.stringContaining('no webhooks/webhooks.ts') }]);
    const out = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES });
    expect(out.manual).toEqual([]);
    expect(out.texts.get(controller)).toContain(`  try {
    const event = stripe.webhooks.constructEvent(req.body, req.get('stripe-signature') ?? '', 'whsec');
    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      console.log(event.id);
    });
    if (answered) {
      res.status(answered.status).set(answered.headers).send(answered.body);
      return;
    }
    res.json({ received: true });
  } catch (error) {
    res.status(400).send(String(error));
  }`);
  });

  it('leaves a webhook handler two routes share, and one behind too many re-exports, as manual steps', async () => {
    const route = 'src/routes.ts';
    const handler = `import type { Request, Response } from 'express';\nimport { stripe } from './stripe.js';\n\nexport async function handleStripe(req: Request, res: Response) {\n  const event = stripe.webhooks.constructEvent(req.body, req.get('stripe-signature') ?? '', 'whsec');\n  console.log(event.id);\n  res.json({ received: true });\n}\n`;
    const shared = await project(
      { [route]: `import { Router } from 'express';\nimport { handleStripe } from './hook.js';\n\nexport const router = Router();\n\nrouter.post('/webhooks/stripe', handleStripe);\nrouter.post('/v1/webhooks/stripe', handleStripe);\n`, 'src/hook.ts': handler },
      route,
      hook(route, 6),
      'express',
    );
    expect(shared.out.texts.size).toBe(0);
    expect(shared.out.manual).toEqual([expect.objectContaining({ file: 'src/hook.ts', reason: expect.stringContaining(`the webhook handler handleStripe is also used at ${route}:7`) })]);

    // routes → a → b → c → d → e → hook: more links than apply follows.
    const chain = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((name, index, all) => [`src/${name}.ts`, `export { handleStripe } from './${all[index + 1] ?? 'hook'}.js';\n`]));
    const far = await project({ [route]: `import { Router } from 'express';\nimport { handleStripe } from './a.js';\n\nexport const router = Router();\n\nrouter.post('/webhooks/stripe', handleStripe);\n`, 'src/hook.ts': handler, ...chain }, route, hook(route, 6), 'express');
    expect(far.out.texts.size).toBe(0);
    expect(far.out.manual).toEqual([expect.objectContaining({ file: route, line: 6, reason: expect.stringContaining('through more than 5 imports and re-exports') })]);
  });
});

describe('keyNamedHandlers: the principal a followed Koa or Hono handler reads', () => {
  it('Koa `ctx.state.user.id` and Hono `c.get(\'user\').id` in handlers declared elsewhere become the instance principal', async () => {
    const koa = await project(
      {
        'src/routes.ts': `import Router from '@koa/router';\nimport { createPayment } from './payments/index.js';\n\nexport const router = new Router();\n\nrouter.post('/payments', createPayment);\n`,
        'src/payments/index.ts': `export * from './create.js';\n`,
        'src/payments/create.ts': `import type { Context } from 'koa';\n\nexport async function createPayment(ctx: Context) {\n  ctx.body = { owner: ctx.state.user.id };\n}\n`,
      },
      'src/routes.ts',
      { ...target('src/routes.ts', 6), scope: 'user' },
      'koa',
    );
    expect(koa.wired.manual.map((m) => m.reason)).toEqual([expect.stringMatching(/^the handler does not read the caller's id/)]);
    expect([...koa.out.principals]).toEqual([['createPayment', ['state', 'user', 'id']]]);

    const hono = await project(
      {
        'src/app.ts': `import { Hono } from 'hono';\nimport createPayment from './payments.js';\n\nexport const app = new Hono();\n\napp.post('/payments', createPayment);\n`,
        'src/payments.ts': `import type { Context } from 'hono';\n\nexport default async function (c: Context) {\n  return c.json({ owner: c.get('user').id }, 201);\n}\n`,
      },
      'src/app.ts',
      { ...target('src/app.ts', 6), scope: 'user' },
      'hono',
    );
    expect([...hono.out.principals]).toEqual([['createPayment', ['var', 'user', 'id']]]);
  });
});

describe('keyNamedHandlers: a followed webhook handler without a check apply recognises', () => {
  it('names the handler\'s file and line and what apply looked for', async () => {
    const route = 'src/routes.ts';
    const { out } = await project(
      {
        [route]: `import { Router } from 'express';\nimport { handleStripe } from './hook.js';\n\nexport const router = Router();\n\nrouter.post('/webhooks/stripe', handleStripe);\n`,
        'src/hook.ts': `import type { Request, Response } from 'express';\n\nexport async function handleStripe(req: Request, res: Response) {\n  const event = JSON.parse(String(req.body)) as { id: string };\n  console.log(event.id);\n  res.json({ received: true });\n}\n`,
      },
      route,
      hook(route, 6),
      'express',
    );
    expect(out.texts.size).toBe(0);
    expect(out.manual).toEqual([{ action: 'stripeWebhook', file: 'src/hook.ts', line: 3, reason: expect.stringContaining('has no Stripe signature check apply recognises in its own body (stripe.webhooks.constructEvent') }]);
  });

  it('a webhook of a provider not configured (MercadoPago in Acosta-gh/Headless-E-commerce@496a2fb) is not called a Stripe one', async () => {
    const route = 'src/routes.ts';
    const { out } = await project(
      {
        [route]: `import { Router } from 'express';\nimport { receiveWebhook } from './hook.js';\n\nexport const router = Router();\n\nrouter.post('/webhooks/mercadopago', receiveWebhook);\n`,
        'src/hook.ts': `import type { Request, Response } from 'express';\n\nexport async function receiveWebhook(req: Request, res: Response) {\n  console.log(req.body.data.id);\n  res.sendStatus(200);\n}\n`,
      },
      route,
      { ...hook(route, 6), action: 'handleWebhook', codeName: 'handleWebhook', path: '/webhooks/mercadopago', provider: undefined },
      'express',
    );
    expect(out.texts.size).toBe(0);
    const [step] = out.manual;
    expect(step?.reason).toContain('comes from a provider apply knows no signature check for');
    expect(step?.reason).toContain("verify the sender's signature first, then wrap the event handling in onceForEvent()");
    expect(step?.reason).not.toContain('has no Stripe signature check');
  });
});

describe('keyNamedHandlers: a class controller method bound to its instance', () => {
  it('follows `webhookController.handle.bind(webhookController)` to the method and wraps its handling there', async () => {
    const route = 'src/routes.ts';
    const controller = 'src/webhook.controller.ts';
    const { input } = await project(
      {
        [route]: `import express from 'express';\nimport { webhookController } from './webhook.controller.js';\n\nexport const router = express.Router();\n\nrouter.post('/webhooks/stripe', express.raw({ type: 'application/json' }), webhookController.handle.bind(webhookController));\n`,
        [controller]: `import type { Request, Response } from 'express';\nimport { stripe } from './stripe.js';\n\nclass WebhookController {\n  async handle(req: Request, res: Response): Promise<void> {\n    const event = stripe.webhooks.constructEvent(req.body as Buffer, req.get('stripe-signature') ?? '', 'whsec');\n    console.log(event.id);\n    res.json({ received: true });\n  }\n}\n\nexport const webhookController = new WebhookController();\n`,
      },
      route,
      hook(route, 6),
      'express',
    );
    const out = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES });
    expect(out.manual).toEqual([]);
    expect(out.texts.get(controller)).toContain(`    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      console.log(event.id);
    });
    if (answered) {
      res.status(answered.status).set(answered.headers).send(answered.body);
      return;
    }
    res.json({ received: true });`);
  });
});

describe('keyNamedHandlers: the verified event of a handler declared as a variable', () => {
  it('wraps with the event the check assigns, never the name of the handler\'s own declaration', async () => {
    const route = 'src/routes.ts';
    const controller = 'src/webhook.controller.ts';
    const { input } = await project(
      {
        [route]: `import express from 'express';\nimport { stripeWebhook } from './webhook.controller.js';\n\nexport const router = express.Router();\n\nrouter.post('/webhooks/stripe', express.raw({ type: 'application/json' }), stripeWebhook);\n`,
        [controller]: `import type { Request, Response } from 'express';\nimport type Stripe from 'stripe';\nimport { stripe } from './stripe.js';\n\nexport const stripeWebhook = async (req: Request, res: Response): Promise<void> => {\n  let event: Stripe.Event;\n  try {\n    event = stripe.webhooks.constructEvent(req.body as Buffer, req.get('stripe-signature') ?? '', 'whsec');\n  } catch {\n    res.status(400).send('bad signature');\n    return;\n  }\n  console.log(event.id);\n  res.json({ received: true });\n};\n`,
      },
      route,
      hook(route, 6),
      'express',
    );
    const out = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES });
    expect(out.manual).toEqual([]);
    expect(out.texts.get(controller)).toContain("  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {\n    console.log(event.id);\n  });\n");
  });
});

describe('keyNamedHandlers: a Hono webhook handler passed by name', () => {
  it('wraps its handling and answers the processor\'s response as a Response', async () => {
    const route = 'src/app.ts';
    const handlers = 'src/webhooks.ts';
    const { input } = await project(
      {
        [route]: `import { Hono } from 'hono';\nimport { stripeWebhook } from './webhooks.js';\n\nexport const app = new Hono();\n\napp.post('/webhooks/stripe', stripeWebhook);\n`,
        [handlers]: `import type { Context } from 'hono';\nimport { stripe } from './stripe.js';\n\nexport const stripeWebhook = async (c: Context) => {\n  const event = await stripe.webhooks.constructEventAsync(await c.req.text(), c.req.header('stripe-signature') ?? '', 'whsec');\n  console.log(event.id);\n  return c.json({ received: true });\n};\n`,
      },
      route,
      hook(route, 6),
      'hono',
    );
    const out = await keyNamedHandlers({ ...input, scaffoldModules: WEBHOOK_MODULES });
    expect(out.manual).toEqual([]);
    expect(out.texts.get(handlers)).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    console.log(event.id);
  });
  if (answered) {
    return new Response(answered.body, { status: answered.status, headers: answered.headers });
  }
  return c.json({ received: true });`);
  });
});
