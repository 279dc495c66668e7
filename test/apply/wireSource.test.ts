import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const MODULES = new Set(['index', 'providers']);
const options = (framework: WireSourceOptions['framework'], extra: Partial<WireSourceOptions> = {}): WireSourceOptions => ({
  framework,
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: MODULES,
  ...extra,
});
const target = (file: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, ...extra });

/** Applying to its own output must change nothing (the file is then what apply wrote, so lines may have moved). */
function expectIdempotent(file: string, text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  const again = wireSource(file, text, targets, { ...opts, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

describe('Express routes', () => {
  const file = 'src/routes/payments.ts';
  const source = `import { Router } from 'express';
import { requireUser } from '../auth.js';

export const router = Router();

router.post('/payments', requireUser, async (req, res) => {
  res.status(201).json({ ok: true });
});
`;

  it('puts the middleware right before the handler, after the auth the route already has', () => {
    const out = wireSource(file, source, [target(file, 6)], options('express'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { idempotency } from '../idempotency/instance.js';\n");
    expect(out.text).toContain("router.post('/payments', requireUser, idempotency.createPayment, async (req, res) => {");
    expectIdempotent(file, out.text, [target(file, 6)], options('express'));
  });

  it('follows the file: double quotes and extensionless relative imports stay so', () => {
    const text = source.replace(/'/g, '"').replace('../auth.js', '../auth');
    const out = wireSource(file, text, [target(file, 6)], options('express'));
    expect(out.text).toContain('import { idempotency } from "../idempotency/instance";\n');
  });

  it('imports through the tsconfig alias the file already uses', () => {
    const text = source.replace("'../auth.js'", "'@/auth'");
    const out = wireSource(file, text, [target(file, 6)], options('express', { imports: { aliases: [{ prefix: '@/', dir: 'src' }], defaultExtension: '' } }));
    expect(out.text).toContain("import { idempotency } from '@/idempotency/instance';\n");
  });

  it('refuses when the recorded line no longer holds the route (the file changed since inspection)', () => {
    const moved = `// a new comment\n${source}`;
    const out = wireSource(file, moved, [target(file, 6)], options('express'));
    expect(out.stale).toEqual([`${file} changed since inspection: POST /payments is registered at line 7, not 6`]);
  });

  it('leaves a raw-body webhook as a manual step with the reason', () => {
    const webhook = `import express from 'express';\nexport const router = express.Router();\nrouter.post('/webhooks/stripe', express.raw({ type: 'application/json' }), (req, res) => {\n  res.sendStatus(200);\n});\n`;
    const out = wireSource(file, webhook, [target(file, 3, { action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', path: '/webhooks/stripe' })], options('express'));
    expect(out.text).toBe(webhook);
    expect(out.manual[0]?.reason).toMatch(/raw body/);
  });

  it('keys a Stripe call made in the handler and spreads into request options it already has', () => {
    const text = `import { Router } from 'express';
import Stripe from 'stripe';
const stripe = new Stripe('sk');
export const router = Router();
router.post('/payments', async (req, res) => {
  const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, { stripeAccount: 'acct_1' });
  await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: 'already-keyed' });
  res.json(intent);
});
`;
    const t = target(file, 5, { provider: 'stripe' });
    const out = wireSource(file, text, [t], options('express'));
    // The handler makes two Stripe calls: the one apply keys takes its position among them as the step.
    expect(out.text).toContain("{ amount: 100, currency: 'eur' }, { ...stripeRequestOptions(idempotencyContext, 0), stripeAccount: 'acct_1' }");
    expect(out.text).toContain("{ idempotencyKey: 'already-keyed' }");
    expect(out.text).toContain('  const idempotencyContext = idempotencyOf(req);\n');
    expect(out.edits.filter((e) => e.summary.includes('Stripe'))).toHaveLength(1);
    expectIdempotent(file, out.text, [t], options('express'));
  });

  it('puts the context guard inside a try block at the indentation of the statements there, whatever the file uses', () => {
    const tryFile = 'src/routes/charge.ts';
    const charge = (unit: string) => `import { Router } from 'express';
import Stripe from 'stripe';

const stripe = new Stripe('sk');
export const router = Router();

router.post('/payments', async (req, res, next) => {
${unit}try {
${unit}${unit}const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
${unit}${unit}res.status(201).json(intent);
${unit}} catch (error) {
${unit}${unit}next(error);
${unit}}
});
`;
    for (const unit of ['  ', '    ', '\t']) {
      const out = wireSource(tryFile, charge(unit), [target(tryFile, 7, { provider: 'stripe', scope: 'global' })], options('express'));
      expect(out.text).toContain(`${unit}try {
${unit}${unit}const idempotencyContext = idempotencyOf(req);
${unit}${unit}if (!idempotencyContext) throw new Error('idempotency middleware is not mounted on this route');
${unit}${unit}const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, stripeRequestOptions(idempotencyContext));
`);
      expectIdempotent(tryFile, out.text, [target(tryFile, 7, { provider: 'stripe', scope: 'global' })], options('express'));
    }
  });

  it('wires several routes of one file, one argument per line where the route is laid out so', () => {
    const text = `import { Router } from 'express';
export const router = Router();
router.post(
  '/payments',
  requireUser,
  async (req, res) => res.json({ user: req.auth?.user?.id }),
);
router.post('/refunds', requireUser, async (_req, res) => res.json({}));
`;
    const targets = [target(file, 3), target(file, 8, { action: 'refund', codeName: 'refund', path: '/refunds' })];
    const out = wireSource(file, text, targets, options('express'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("  requireUser,\n  idempotency.createPayment,\n  async (req, res)");
    expect(out.text).toContain("router.post('/refunds', requireUser, idempotency.refund, async");
    expect(out.principal).toEqual(['auth', 'user', 'id']);
    expectIdempotent(file, out.text, targets, options('express'));
  });

  it('names the provider helper to pass for a PayPal call made outside the handler', () => {
    const out = wireSource(file, source, [target(file, 6, { provider: 'paypal' })], options('express'));
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('paypalRequestId(context) from providers.ts as its paypalRequestId (the PayPal-Request-Id header)')]);
  });

  it('leaves a Stripe call in a service as a manual step', () => {
    const out = wireSource(file, source, [target(file, 6, { provider: 'stripe' })], options('express'));
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringMatching(/not made inside the route handler/)]);
  });
});

describe('Fastify routes', () => {
  const file = 'src/routes.ts';
  it('passes the hooks as the route options when the route has none', () => {
    const text = `export async function routes(app: any) {\n  app.post('/payments', async () => ({ ok: true }));\n}\n`;
    const out = wireSource(file, text, [target(file, 2)], options('fastify'));
    expect(out.text).toContain("app.post('/payments', idempotency.createPayment, async () => ({ ok: true }));");
    expectIdempotent(file, out.text, [target(file, 2)], options('fastify'));
  });

  it('leaves a route with its own preHandler to the user, with the merge to write', () => {
    const text = `export async function routes(app: any) {\n  app.post('/payments', { preHandler: auth }, async () => ({ ok: true }));\n}\n`;
    const out = wireSource(file, text, [target(file, 2)], options('fastify'));
    expect(out.text).toBe(text);
    expect(out.manual[0]?.reason).toContain('preHandler: [yours, idempotency.createPayment.preHandler]');
  });

  it('never puts the request middleware on a webhook route: the file is left as it was, with the processor as the manual step', () => {
    const text = `export async function routes(app: any) {\n  app.post('/webhooks/stripe', async () => ({ received: true }));\n}\n`;
    const out = wireSource(file, text, [target(file, 2, { action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', path: '/webhooks/stripe' })], options('fastify'));
    expect(out.text).toBe(text);
    expect(out.edits).toEqual([]);
    expect(out.manual[0]?.reason).toContain("the scaffold's webhook processor");
  });
});

describe('NestJS handlers', () => {
  const file = 'src/payments.controller.ts';
  const text = `import { Controller, Post } from '@nestjs/common';

@Controller('payments')
export class PaymentsController {
  @Post(':id/capture')
  capture() {
    return { ok: true };
  }
}
`;
  it('marks the method under its verb decorator, matching controller prefix + method path', () => {
    const t = target(file, 5, { path: '/payments/:id/capture' });
    const out = wireSource(file, text, [t], options('nestjs'));
    expect(out.text).toContain("  @Post(':id/capture')\n  @Idempotent(ACTIONS.createPayment)\n  capture() {");
    expect(out.text).toContain("import { Idempotent, ACTIONS } from './idempotency/index.js';");
    expectIdempotent(file, out.text, [t], options('nestjs'));
  });

  it('refuses when no handler for the route is at the recorded line', () => {
    const out = wireSource(file, text, [target(file, 5, { path: '/payments' })], options('nestjs'));
    expect(out.stale).toHaveLength(1);
  });

  it("finds the handler under the project's own controller decorator, whose prefix only the inspection knows", () => {
    const custom = `import { Body, Post } from '@nestjs/common';
import { PaymentController } from '../payment.controller.decorator';

@PaymentController('stripe/credit-card')
export class CardsController {
  @Post()
  add(@Body() dto: unknown) {
    return dto;
  }

  @Post('default')
  setDefault(@Body() dto: unknown) {
    return dto;
  }
}
`;
    const targets = [
      target(file, 6, { path: '/payment/stripe/credit-card' }),
      target(file, 11, { action: 'setDefaultCard', codeName: 'setDefaultCard', path: '/payment/stripe/credit-card/default' }),
    ];
    const out = wireSource(file, custom, targets, options('nestjs'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain('  @Post()\n  @Idempotent(ACTIONS.createPayment)\n  add(');
    expect(out.text).toContain("  @Post('default')\n  @Idempotent(ACTIONS.setDefaultCard)\n  setDefault(");
    expectIdempotent(file, out.text, targets, options('nestjs'));
    // As the CLI runs it again: the recorded lines now point elsewhere in the edited file.
    const again = wireSource(file, out.text, targets, options('nestjs'));
    expect([again.text, again.edits, again.stale]).toEqual([out.text, [], []]);
  });
});

describe('routing-controllers on Express', () => {
  const file = 'src/api/controllers/PetController.ts';
  const source = `import { Authorized, Body, JsonController, Post } from 'routing-controllers';

@Authorized()
@JsonController('/pets')
export class PetController {
  @Post()
  public create(@Body() body: { name: string }) {
    return body;
  }
}
`;

  it('leaves a method it cannot wire untouched with a manual step saying why (@UseBefore runs before body parsing and auth), not "changed since inspection"', () => {
    for (const line of [6, 7]) {
      const out = wireSource(file, source, [target(file, line, { path: '/pets' })], options('express'));
      expect(out.stale).toEqual([]);
      expect(out.text).toBe(source);
      expect(out.edits).toEqual([]);
      expect(out.manual).toHaveLength(1);
      expect(out.manual[0]?.reason).toMatch(/^routing-controllers runs @UseBefore middleware before its body parser and authorizationChecker/);
      // Not async (the claim is awaited): the step carries the call apply would write (routingControllersMethod.test.ts).
      expect(out.manual[0]?.reason).toContain("it is not async");
      expect(out.manual[0]?.reason).toContain("@HeaderParam('Idempotency-Key', { type: String })");
    }
  });

  it('a method decorated by something else entirely is still looked up as a route registration', () => {
    const other = source.replace("from 'routing-controllers'", "from './decorators'");
    expect(wireSource(file, other, [target(file, 7, { path: '/pets' })], options('express')).stale).toHaveLength(1);
  });
});

describe('GraphQL mutations in a web framework project', () => {
  it('a NestJS resolver method gets @Idempotent under its @Mutation(): the Nest interceptor protects GraphQL calls', () => {
    const nest = `import { Args, Mutation, Resolver } from '@nestjs/graphql';

@Resolver()
export class OrdersResolver {
  @Mutation(() => String)
  placeOrder(@Args('sku') sku: string) {
    return sku;
  }

  @Mutation(() => String, { name: 'cancelOrder' })
  cancel(@Args('id') id: string) {
    return id;
  }
}
`;
    const file = 'src/orders.resolver.ts';
    const targets = [target(file, 5, { path: '/placeOrder' }), target(file, 10, { action: 'cancelOrder', codeName: 'cancelOrder', path: '/cancelOrder' })];
    const out = wireSource(file, nest, targets, options('nestjs'));
    expect([out.stale, out.manual]).toEqual([[], []]);
    expect(out.text).toContain("import { Idempotent, ACTIONS } from './idempotency/index.js';\n");
    expect(out.text).toContain('  @Mutation(() => String)\n  @Idempotent(ACTIONS.createPayment)\n  placeOrder(');
    expect(out.text).toContain("  @Mutation(() => String, { name: 'cancelOrder' })\n  @Idempotent(ACTIONS.cancelOrder)\n  cancel(");
    expect(out.edits.map((e) => e.summary)).toEqual(['marks cancel() with @Idempotent(ACTIONS.cancelOrder)', 'marks placeOrder() with @Idempotent(ACTIONS.createPayment)']);
    expectIdempotent(file, out.text, targets, options('nestjs'));
  });

  it('a TypeGraphQL resolver and an Apollo resolver map get a manual step, never an edit', () => {
    const typeGraphql = `import { Arg, Mutation, Resolver } from 'type-graphql';

@Resolver()
export class OrdersResolver {
  @Mutation(() => String)
  placeOrder(@Arg('sku') sku: string) {
    return sku;
  }
}
`;
    const out = wireSource('src/orders.resolver.ts', typeGraphql, [target('src/orders.resolver.ts', 5, { path: '/placeOrder' })], options('nestjs'));
    expect([out.text, out.edits, out.stale]).toEqual([typeGraphql, [], []]);
    expect(out.manual[0]?.reason).toMatch(/^a GraphQL mutation arrives at the one GraphQL endpoint/);
    const map = `export const resolvers = {
  Mutation: {
    placeOrder: async (_parent: unknown, args: { sku: string }) => args.sku,
  },
};
`;
    const mapped = wireSource('src/resolvers.ts', map, [target('src/resolvers.ts', 3, { path: '/placeOrder' })], options('express'));
    expect([mapped.text, mapped.edits, mapped.stale]).toEqual([map, [], []]);
    expect(mapped.manual[0]?.reason).toMatch(/^a GraphQL mutation arrives/);
  });
});
