import { describe, expect, it } from 'vitest';
import { factsFor } from '../../src/findings/actionFacts.js';
import { codeDesign, describeFromCode, impactFromCode } from '../../src/model/fromCode.js';
import type { Config } from '../../src/config/schema.js';
import { buildDesign } from '../../src/model/index.js';
import { contextFor } from './ruleTester.js';

const base = {
  format: 'md', output: 'docs/d.md',
  stack: { language: 'javascript', framework: 'express', database: 'postgres', broker: 'none', testFramework: 'vitest' },
  retrySources: ['client-retry'], payments: ['adyen'], concurrency: 'multi-instance', retention: '24h', detectionLatency: '50ms', scaffold: false,
};
const action = { name: 'createPayment', trigger: 'http', route: 'POST /api/payments', significantFields: ['amount'], source: 'index.js:3' };

const files = (registration: string) => ({
  'index.js': `const express = require('express');\nconst payments = require('./src/controllers/payments');\n${registration}\n`,
  'src/controllers/payments.js': `const { asyncHandler } = require('../util');
const adyen = require('../services/adyen');
const createPayment = asyncHandler(async (req, res) => {
  res.json(await adyen.pay(req.body));
});
module.exports = { createPayment };
`,
  'src/services/adyen.js': `const { CheckoutAPI, Client } = require('@adyen/api-library');
const checkout = new CheckoutAPI(new Client({ apiKey: 'k', environment: 'TEST' }));
const pay = async (body) => checkout.PaymentsApi.payments({ amount: body.amount, reference: body.orderId, merchantAccount: 'M' });
module.exports = { pay };
`,
});

describe('code facts follow a registered handler into controllers and services', () => {
  it('app.post(path, controller.fn) → wrapped handler → service → Adyen call, with the SDK default budget', () => {
    const ctx = contextFor({ name: 'cjs', files: files(`express().post('/api/payments', payments.createPayment);`), config: { ...base, actions: [action] }, dependencies: { '@adyen/api-library': '^32.1.0' } });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
    expect(facts?.handler).toEqual({ file: 'src/controllers/payments.js', line: 3, name: 'createPayment' });
    expect(facts?.calls).toEqual([{ provider: 'adyen', operation: 'payments', risk: 'moves-money', file: 'src/services/adyen.js', line: 3, keyed: false, via: 'pay' }]);
    expect(facts?.budgets).toEqual([{ provider: 'adyen', timeoutMs: 30_000, attempts: 1, evidence: '@adyen/api-library default, no automatic retry' }]);
  });

  it('follows an import through a tsconfig paths alias into another folder of an Nx workspace (gitroomhq/postiz-app)', () => {
    const alias = {
      'apps/api/src/billing.js': `const express = require('express');\nconst payments = require('./payments');\nexpress().post('/api/payments', payments.createPayment);\n`,
      'apps/api/src/payments.js': `const adyen = require('@org/payments/services/adyen');\nconst createPayment = async (req, res) => {\n  res.json(await adyen.pay(req.body));\n};\nmodule.exports = { createPayment };\n`,
      'libs/payments/src/services/adyen.js': files('')['src/services/adyen.js'],
    };
    const config = { ...base, actions: [{ ...action, source: 'apps/api/src/billing.js:3' }] } as unknown as Config;
    const ctx = contextFor({ name: 'nx', files: alias, config, dependencies: { '@adyen/api-library': '^32.1.0' } });
    // Without the alias the import names no file the engine knows.
    expect(factsFor(ctx, config.actions[0]!)?.calls ?? []).toEqual([]);
    const aliased = { ...ctx, aliases: [{ prefix: '@org/payments/', dir: 'libs/payments/src' }] };
    expect(factsFor(aliased, config.actions[0]!)?.calls).toEqual([{ provider: 'adyen', operation: 'payments', risk: 'moves-money', file: 'libs/payments/src/services/adyen.js', line: 3, keyed: false, via: 'pay' }]);
  });

  it('in a chain of registrations (@hono/zod-openapi `.openapi(route, handlers.x)`), the handler registered on the action\'s line', () => {
    const chained = {
      'src/notes.index.ts': `import { OpenAPIHono } from '@hono/zod-openapi';
import * as handlers from './notes.handlers';
import * as routes from './notes.routes';
export const notes = new OpenAPIHono()
  .openapi(routes.create, handlers.create)
  .openapi(routes.remove, handlers.remove);
`,
      'src/notes.handlers.ts': `import { db, notes } from './db';
export const create = async (c) => c.json(await db.insert(notes).values(c.req.valid('json')).returning(), 201);
export const remove = async (c) => c.json(await db.delete(notes).where(c.req.valid('param')));
`,
    };
    const hono = { ...base, stack: { ...base.stack, language: 'typescript', framework: 'hono' }, payments: [] };
    const ctx = contextFor({ name: 'openapi-chain', files: chained, config: { ...hono, actions: [{ name: 'createNote', trigger: 'http', route: 'POST /notes', significantFields: ['body'], source: 'src/notes.index.ts:5' }] } });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
    expect(facts?.handler).toEqual({ file: 'src/notes.handlers.ts', line: 2, name: 'create' });
    expect(facts?.writes.map((w) => w.kind)).toEqual(['create']);
  });

  it('a NestJS @Mutation() resolver method is marked as one, and the design says how its protection answers', () => {
    const resolver = `import { Args, Mutation, Resolver } from '@nestjs/graphql';
@Resolver()
export class OrdersResolver {
  @Mutation(() => String)
  placeOrder(@Args('sku') sku: string) { return sku; }
}
`;
    const nest = { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nestjs' }, payments: [] };
    const placeOrder = { name: 'placeOrder', trigger: 'http', route: 'POST /placeOrder', significantFields: ['sku'], source: 'src/orders.resolver.ts:4' };
    const ctx = contextFor({ name: 'nest-resolver', files: { 'src/orders.resolver.ts': resolver }, config: { ...nest, actions: [placeOrder] } });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
    expect(facts?.graphql).toBe('nestjs');
    const model = buildDesign(ctx.config as Config, undefined, { now: new Date('2026-01-15T00:00:00Z'), code: [facts!] });
    expect(model.assumptions).toContainEqual(expect.stringMatching(/^placeOrder is a GraphQL mutation \(a NestJS resolver method, protected by marking it @Idempotent\(ACTIONS\.placeOrder\)\): the interceptor takes the Idempotency-Key header from the HTTP request in the GraphQL context/));
    // A controller route is none.
    const route = contextFor({ name: 'nest-route', files: { 'src/orders.controller.ts': "import { Controller, Post } from '@nestjs/common';\n@Controller('orders')\nexport class OrdersController {\n  @Post()\n  create() { return 1; }\n}\n" }, config: { ...nest, actions: [{ ...placeOrder, source: 'src/orders.controller.ts:4' }] } });
    expect(factsFor(route, (route.config as Config).actions[0]!)?.graphql).toBeUndefined();
  });

  it('a handler the code does not let us follow gives no facts (the design then speaks from the configuration)', () => {
    const ctx = contextFor({ name: 'opaque', files: files(`express().post('/api/payments', require('some-package').handler);`), config: { ...base, actions: [action] }, dependencies: { '@adyen/api-library': '^32.1.0' } });
    expect(factsFor(ctx, (ctx.config as Config).actions[0]!)).toBeUndefined();
  });
});

describe('a handler registered as a member of a class or object another module exports', () => {
  // The shape of javieraviles/node-typescript-koa-rest@3233861: `router.post('/users', user.createUser)`, `user`
  // re-exported by an index file as the default export of a controller class with static methods.
  const factsWith = (registration: string, extra: Record<string, string>) => {
    const ctx = contextFor({
      name: 'holder-member',
      files: {
        'src/routes.ts': `import Router from '@koa/router';\n${registration}\n`,
        ...extra,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'koa' }, actions: [{ ...action, name: 'createUser', route: 'POST /users', source: 'src/routes.ts:4' }] },
      dependencies: { '@koa/router': '^10.0.0', typeorm: '^0.2.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!);
  };
  const controller = `import { getManager } from 'typeorm';
export default class UserController {
  public static async getUsers(ctx: any): Promise<void> {
    ctx.body = await getManager().getRepository(User).find();
  }
  public static async createUser(ctx: any): Promise<void> {
    const user = new User();
    user.email = ctx.request.body.email;
    ctx.body = await getManager().getRepository(User).save(user);
  }
}
`;

  it('a named import of an index file re-exporting a default class: its static method', () => {
    const facts = factsWith(`import { user } from './controller';\nconst router = new Router();\nrouter.post('/users', user.createUser);`, {
      'src/controller/index.ts': `export { default as user } from './user';\n`,
      'src/controller/user.ts': controller,
    });
    expect(facts?.handler).toEqual({ file: 'src/controller/user.ts', line: 6, name: 'createUser' });
    expect(facts?.writes.map((w) => `${w.kind} ${w.target}`)).toEqual(['create User']);
  });

  it('a default import of the class, `export default Name` after the class, and an exported object literal', () => {
    const named = controller.replace('export default class', 'class') + 'export default UserController;\n';
    expect(factsWith(`import UserController from './user';\nconst router = new Router();\nrouter.post('/users', UserController.createUser);`, { 'src/user.ts': named })?.handler).toEqual({ file: 'src/user.ts', line: 6, name: 'createUser' });
    const object = `export const users = {\n  async list(ctx: any) {},\n  createUser: async (ctx: any) => {\n    ctx.body = ctx.request.body;\n  },\n};\n`;
    expect(factsWith(`import { users } from './users';\nconst router = new Router();\nrouter.post('/users', users.createUser);`, { 'src/users.ts': object })?.handler).toMatchObject({ file: 'src/users.ts', line: 3 });
  });
});

describe('a service taken by name from an index file', () => {
  // The shape of hagopj13/node-express-boilerplate@179ae84: `const { tokenService } = require('../services')`, whose
  // index says `module.exports.tokenService = require('./token.service')`.
  const factsWith = (take: string, index: string) => {
    const ctx = contextFor({
      name: 'index-service',
      files: {
        'index.js': `const express = require('express');\nconst auth = require('./src/controllers/auth');\nexpress().post('/api/payments', auth.createPayment);\n`,
        'src/controllers/auth.js': `${take}\nconst createPayment = async (req, res) => {\n  res.json(await tokenService.generateToken(req.user));\n};\nmodule.exports = { createPayment };\n`,
        'src/services/index.js': index,
        'src/services/token.service.js': "const { Token } = require('../models');\nconst generateToken = async (user) => Token.create({ user: user.id });\nmodule.exports = { generateToken };\n",
      },
      config: { ...base, stack: { ...base.stack, database: 'mongodb' }, actions: [action] },
      dependencies: { mongoose: '^8.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!);
  };

  it('through module.exports.name = require(…), exports.name, an object of requires, and ES re-exports', () => {
    const require = "const { tokenService } = require('../services');";
    for (const index of [
      "module.exports.tokenService = require('./token.service');\n",
      "exports.tokenService = require('./token.service');\n",
      "module.exports = { tokenService: require('./token.service') };\n",
      "const tokenService = require('./token.service');\nmodule.exports = { tokenService };\n",
    ]) {
      expect(factsWith(require, index)?.writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`), index).toEqual(['create Token src/services/token.service.js:2']);
    }
    const imported = "import { tokenService } from '../services';";
    expect(factsWith(imported, "export * as tokenService from './token.service';\n")?.writes).toHaveLength(1);
    expect(factsWith(imported, "export { default as tokenService } from './token.service';\n")?.writes).toHaveLength(1);
  });
});

describe('leases from the calls: PayPal has no time-out by default, a platform limit bounds it', () => {
  const paypal = (extra: string) => ({
    'app/api/capture/route.ts': `import { Client, OrdersController } from '@paypal/paypal-server-sdk';
const orders = new OrdersController(new Client({}));
${extra}export async function POST(req: Request) {
  const { orderId, cartId } = await req.json();
  return Response.json(await orders.captureOrder({ id: orderId, paypalRequestId: \`capture:\${cartId}\` }));
}
`,
  });
  const config = (source: string) => ({ ...base, payments: ['paypal'], actions: [{ name: 'captureCart', trigger: 'http', route: 'POST /api/capture', significantFields: ['orderId'], source }] });

  it('an unbounded client gets a renewed lease, and the finding says so', async () => {
    const { decideLease, worstCaseOf } = await import('../../src/model/timing.js');
    const ctx = contextFor({ name: 'paypal', files: paypal(''), config: config('app/api/capture/route.ts:4'), dependencies: { '@paypal/paypal-server-sdk': '^2.5.0' } });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.budgets).toEqual([{ provider: 'paypal', timeoutMs: null, attempts: 1, evidence: 'the PayPal SDK sets no request time-out by default (timeout: 0)' }]);
    const lease = decideLease((ctx.config as Config).actions[0]!, 2_000, true, 'multi-instance', worstCaseOf(facts.budgets, facts.platformCap));
    expect(lease.heartbeatMs).toBe(10_000);
    expect(lease.raisedFor?.ms).toBeNull();
  });

  it('maxDuration in the route bounds the worst case, so a plain lease covers it', async () => {
    const { decideLease, worstCaseOf } = await import('../../src/model/timing.js');
    const ctx = contextFor({ name: 'paypal-capped', files: paypal('export const maxDuration = 10;\n'), config: config('app/api/capture/route.ts:5'), dependencies: { '@paypal/paypal-server-sdk': '^2.5.0' } });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    const worst = worstCaseOf(facts.budgets, facts.platformCap)!;
    expect(worst).toEqual({ ms: 10_000, text: 'PayPal: no time-out × 1 attempt (the PayPal SDK sets no request time-out by default (timeout: 0)), capped by maxDuration = 10 in the route' });
    const lease = decideLease((ctx.config as Config).actions[0]!, 2_000, true, 'multi-instance', worst);
    expect(lease.heartbeatMs).toBeUndefined();
    expect(lease.lockTimeoutMs).toBeGreaterThanOrEqual(10_000);
  });
});

describe('code facts follow NestJS injection into services', () => {
  it('@Post handler → this.subscriptions (constructor-injected, imported through an index re-export at baseUrl) → this.stripe service → Stripe call', () => {
    // The shape of AlexKhomenko00/payment-proviers-integration@b97e8a8.
    const ctx = contextFor({
      name: 'nest-di',
      files: {
        'src/payment/subscriptions.controller.ts': `import { Body, Controller, Post } from '@nestjs/common';
import { SubscriptionsService } from 'src/stripe';
@Controller('subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}
  @Post('monthly')
  async monthly(@Body() dto: { customerId: string }) {
    return this.subscriptions.startMonthly(dto.customerId);
  }
}
`,
        'src/stripe/index.ts': `export { StripeService } from './stripe.service';\nexport * from './subscriptions.service';\n`,
        'src/stripe/subscriptions.service.ts': `import { Injectable } from '@nestjs/common';
import { StripeService } from './stripe.service';
@Injectable()
export class SubscriptionsService {
  constructor(private readonly stripeService: StripeService) {}
  startMonthly(customer: string) {
    return this.stripeService.subscribe(customer, this.priceId());
  }
  private priceId() { return 'price_monthly'; }
}
`,
        'src/stripe/stripe.service.ts': `import Stripe from 'stripe';
export class StripeService {
  private readonly stripe = new Stripe('sk_test');
  async subscribe(customer: string, price: string) {
    return this.stripe.subscriptions.create({ customer, items: [{ price }] });
  }
}
`,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nestjs' }, payments: ['stripe'], actions: [{ ...action, name: 'monthly', route: 'POST /subscriptions/monthly', source: 'src/payment/subscriptions.controller.ts:6' }] },
      dependencies: { stripe: '^14.0.0', '@nestjs/common': '^10.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.calls.map((c) => `${c.operation} ${c.file}:${c.line} via ${c.via}`)).toEqual(['subscriptions.create src/stripe/stripe.service.ts:5 via subscribe']);
    expect(facts.spans?.map((s) => s.file)).toEqual(['src/payment/subscriptions.controller.ts', 'src/stripe/subscriptions.service.ts', 'src/stripe/stripe.service.ts', 'src/stripe/subscriptions.service.ts']);
  });
});

describe('a field typed with an interface is followed to the class behind it', () => {
  // The shape of Vegetam/microservices-ddd-kafka@afdd111: a command handler writes through a repository port.
  const files = (extra: Record<string, string>) => ({
    'src/payments.controller.ts': `import { Body, Controller, Inject, Post } from '@nestjs/common';
import { IPaymentRepository, PAYMENT_REPOSITORY } from './domain';
@Controller('payments')
export class PaymentsController {
  constructor(@Inject(PAYMENT_REPOSITORY) private readonly repo: IPaymentRepository) {}
  @Post()
  async pay(@Body() dto: { orderId: string }) {
    await this.repo.saveWithOutbox(dto.orderId);
  }
}
`,
    'src/domain.ts': `export const PAYMENT_REPOSITORY = Symbol('PAYMENT_REPOSITORY');\nexport interface IPaymentRepository { saveWithOutbox(id: string): Promise<void> }\n`,
    'src/infra/payment.repository.ts': `import { IPaymentRepository } from '../domain';
export class PaymentRepository implements IPaymentRepository {
  async saveWithOutbox(id: string): Promise<void> {
    await db.query('INSERT INTO outbox_events (aggregate_id) VALUES ($1)', [id]);
  }
}
declare const db: { query(sql: string, args: unknown[]): Promise<void> };
`,
    ...extra,
  });
  const factsOf = (extra: Record<string, string>) => {
    const ctx = contextFor({
      name: 'ports',
      files: files(extra),
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nestjs' }, actions: [{ ...action, name: 'pay', route: 'POST /payments', source: 'src/payments.controller.ts:7' }] },
      dependencies: { '@nestjs/common': '^10.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };
  const inMemory = { 'test/in-memory.repository.ts': `import { IPaymentRepository } from '../src/domain';\nexport class InMemoryPaymentRepository implements IPaymentRepository {\n  async saveWithOutbox(): Promise<void> {}\n}\n` };

  it('the one class implementing it', () => {
    expect(factsOf({}).writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`)).toEqual(['create outbox_events src/infra/payment.repository.ts:4']);
  });

  it('with several implementations, the one the module binds to the injection token', () => {
    const module = { 'src/payments.module.ts': `import { PAYMENT_REPOSITORY } from './domain';\nimport { PaymentRepository } from './infra/payment.repository';\nexport const providers = [{ provide: PAYMENT_REPOSITORY, useClass: PaymentRepository }];\n` };
    expect(factsOf({ ...inMemory, ...module }).writes.map((w) => w.target)).toEqual(['outbox_events']);
    // Without a binding, two implementations settle nothing: no write is claimed.
    expect(factsOf(inMemory).writes).toEqual([]);
  });
});

describe('an abstract class as the port, bound to one adapter per database', () => {
  // The shape of brocoders/nestjs-boilerplate@9620f15: `usersRepository: UserRepository` (abstract), implemented by a
  // relational (TypeORM) and a document (Mongoose) adapter, each bound by its own persistence module.
  const adapter = (folder: string, cls: string, write: string) => `import { UserRepository } from '../../user.repository';
export class ${cls} implements UserRepository {
  async create(data: { email: string }) {
    ${write}
  }
}
declare const db: { query(sql: string, args: unknown[]): Promise<void> };
declare const users: { create(doc: unknown): Promise<void> };
`;
  const factsOf = (database: string) => {
    const ctx = contextFor({
      name: 'abstract-port',
      files: {
        'src/users.controller.ts': `import { Body, Controller, Post } from '@nestjs/common';
import { UserRepository } from './persistence/user.repository';
@Controller('users')
export class UsersController {
  constructor(private readonly usersRepository: UserRepository) {}
  @Post()
  async create(@Body() dto: { email: string }) {
    await this.usersRepository.create(dto);
  }
}
`,
        'src/persistence/user.repository.ts': 'export abstract class UserRepository {\n  abstract create(data: { email: string }): Promise<void>;\n}\n',
        'src/persistence/relational/repositories/user.repository.ts': adapter('relational', 'UsersRelationalRepository', "await db.query('INSERT INTO users (email) VALUES ($1)', [data.email]);"),
        'src/persistence/document/repositories/user.repository.ts': adapter('document', 'UsersDocumentRepository', 'await users.create(data);'),
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nestjs', database }, actions: [{ ...action, name: 'createUser', route: 'POST /users', source: 'src/users.controller.ts:6' }] },
      dependencies: { '@nestjs/common': '^10.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };

  it("follows the adapter for the configured database, told by its folder; the abstract method alone has no body to read", () => {
    expect(factsOf('postgres').writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`)).toEqual(['create users src/persistence/relational/repositories/user.repository.ts:4']);
    expect(factsOf('unknown').writes).toEqual([]);
  });
});

describe('SQL writes are recognised by their shape, not by a word in a message', () => {
  it('a log message saying "update to" or "delete from" is no write; UPDATE … SET and DELETE … WHERE are', () => {
    const ctx = contextFor({
      name: 'sql-prose',
      files: {
        'index.js': `const express = require('express');
const app = express();
app.post('/orders/:id/pay', async (req, res) => {
  log.error('PaymentIntent ID does not match: rejecting update to avoid wrong PI');
  log.warn('could not delete from cart');
  await db.query('UPDATE orders SET paid = true WHERE id = $1', [req.params.id]);
  await db.query('DELETE FROM holds h WHERE h.order_id = $1', [req.params.id]);
  res.sendStatus(204);
});
`,
      },
      config: { ...base, actions: [{ ...action, name: 'pay', route: 'POST /orders/:id/pay', source: 'index.js:3' }] },
      dependencies: { express: '^4.0.0', pg: '^8.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.writes.map((w) => `${w.kind} ${w.target} :${w.line}`)).toEqual(['update orders :6', 'delete holds :7']);
  });
});

describe('an upsert keyed on a value made fresh per attempt is a create', () => {
  const factsOf = (body: string) => {
    const ctx = contextFor({
      name: 'fresh-upsert',
      files: {
        'index.js': `const express = require('express');
const { randomUUID } = require('node:crypto');
const app = express();
app.post('/orders', async (req, res) => {
${body}
  res.sendStatus(201);
});
`,
      },
      config: { ...base, actions: [{ ...action, name: 'placeOrder', route: 'POST /orders', source: 'index.js:4' }] },
      dependencies: { express: '^4.0.0', pg: '^8.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };
  const writes = (body: string) => factsOf(body).writes.map((w) => `${w.kind} ${w.target}${w.freshKey ? ` fresh ${w.freshKey}` : ''}`);

  it('ON CONFLICT (id) with randomUUID() as the id inserts a second row; ON CONFLICT (order_ref) on the body does not', () => {
    expect(writes("  await db.query('INSERT INTO orders (id, order_ref) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [randomUUID(), req.body.ref]);")).toEqual(['create orders fresh randomUUID()']);
    expect(writes("  await db.query('INSERT INTO orders (id, order_ref) VALUES ($1, $2) ON CONFLICT (order_ref) DO NOTHING', [randomUUID(), req.body.ref]);")).toEqual(['upsert orders']);
    // No target and a stable value among the values: which unique column rejects a duplicate is not known, so as before.
    expect(writes("  await db.query('INSERT INTO orders (id, order_ref) VALUES ($1, $2) ON CONFLICT DO NOTHING', [randomUUID(), req.body.ref]);")).toEqual(['upsert orders']);
    expect(writes('  await db.query(`INSERT INTO orders (id, placed_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [randomUUID(), new Date()]);')).toEqual(['create orders fresh randomUUID()']);
  });

  it('Prisma and Supabase upserts keyed on a fresh value, directly or through a const of the handler', () => {
    expect(writes('  const id = uuidv4();\n  await prisma.order.upsert({ where: { id }, create: { id, ref: req.body.ref }, update: {} });')).toEqual(['create order fresh uuidv4()']);
    expect(writes('  await prisma.order.upsert({ where: { ref: req.body.ref }, create: { id: uuidv4(), ref: req.body.ref }, update: {} });')).toEqual(['upsert order']);
    expect(writes("  await supabase.from('orders').upsert({ id: Date.now(), ref: req.body.ref }, { onConflict: 'id' });")).toEqual(['create orders fresh Date.now()']);
    expect(writes("  await supabase.from('orders').upsert({ id: Date.now(), ref: req.body.ref }, { onConflict: 'ref' });")).toEqual(['upsert orders']);
  });

  it("so the design's duplicate-impact sentence says a duplicate inserts a second row", () => {
    const design = codeDesign(factsOf("  await db.query('INSERT INTO orders (id, order_ref) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [randomUUID(), req.body.ref]);"));
    expect(impactFromCode(design, 'http')).toEqual({ text: 'A duplicate request inserts a second row into `orders`: two records for one intent.', severity: 'data' });
    expect(describeFromCode(design, 'PostgreSQL')).toContain('inserts into `orders` (`index.js:5`; an upsert keyed on `randomUUID()`, made fresh on each attempt, so it never conflicts)');
    const stable = codeDesign(factsOf("  await db.query('INSERT INTO orders (id, order_ref) VALUES ($1, $2) ON CONFLICT (order_ref) DO NOTHING', [randomUUID(), req.body.ref]);"));
    expect(impactFromCode(stable, 'http').text).toMatch(/^A duplicate request rewrites `orders` with the same values, harmless by itself/);
  });
});

describe('code facts follow a service reached through a typed parameter', () => {
  // The shape of stripe/stripe-commercetools-connect-app@1c61c00 (processor/src/routes/stripe-payment.route.ts): a
  // Fastify plugin gets its service in its options, typed by an alias that intersects FastifyPluginOptions.
  const routes = (types: string) => `import { FastifyInstance, FastifyPluginOptions } from 'fastify';
import { StripePaymentService } from '../services/stripe-payment.service';
${types}
export const paymentRoutes = async (fastify: FastifyInstance, opts: FastifyPluginOptions & PaymentRoutesOptions) => {
  fastify.post('/payments', async (request, reply) => {
    const resp = await opts.paymentService.createPaymentIntent(request.body);
    return reply.status(200).send(resp);
  });
};
`;
  const service = `import Stripe from 'stripe';
const stripe = new Stripe('sk_test');
export class StripePaymentService {
  public async createPaymentIntent(body: unknown) {
    return stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: crypto.randomUUID() });
  }
}
`;
  const factsOf = (files: Record<string, string>) => {
    const ctx = contextFor({
      name: 'fastify-opts',
      files: { ...files, 'src/services/stripe-payment.service.ts': service },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'fastify' }, payments: ['stripe'], actions: [{ ...action, name: 'createPayment', route: 'POST /payments', source: 'src/routes/stripe-payment.route.ts:5' }] },
      dependencies: { stripe: '^20.0.0', fastify: '^5.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };

  it('opts.paymentService.createPaymentIntent() with the options type declared in the same file', () => {
    const facts = factsOf({ 'src/routes/stripe-payment.route.ts': routes('type PaymentRoutesOptions = { paymentService: StripePaymentService };') });
    expect(facts.calls.map((c) => `${c.operation} ${c.file}:${c.line} via ${c.via}`)).toEqual(['paymentIntents.create src/services/stripe-payment.service.ts:5 via createPaymentIntent']);
  });

  it('each inline handler of a plugin has its own facts, not the union of the plugin', () => {
    const plugin = `import { FastifyInstance } from 'fastify';
import { StripePaymentService } from '../services/stripe-payment.service';
type PaymentRoutesOptions = { paymentService: StripePaymentService };
export const paymentRoutes = async (fastify: FastifyInstance, opts: PaymentRoutesOptions) => {
  fastify.post(
    '/payments',
    async (request, reply) => reply.send(await opts.paymentService.createPaymentIntent(request.body)),
  );
  fastify.post(
    '/refunds',
    wrap(async (request, reply) => reply.send(await opts.paymentService.refund(request.body))),
  );
};
const wrap = <T>(fn: T) => fn;
`;
    const refunding = service.replace('export class StripePaymentService {', "export class StripePaymentService {\n  async refund(body: unknown) {\n    return stripe.refunds.create({ payment_intent: 'pi' });\n  }");
    const ctx = contextFor({
      name: 'fastify-inline',
      files: { 'src/routes/stripe-payment.route.ts': plugin, 'src/services/stripe-payment.service.ts': refunding },
      config: {
        ...base, stack: { ...base.stack, language: 'typescript', framework: 'fastify' }, payments: ['stripe'],
        actions: [{ ...action, name: 'createPayment', route: 'POST /payments', source: 'src/routes/stripe-payment.route.ts:5' }, { ...action, name: 'refund', route: 'POST /refunds', source: 'src/routes/stripe-payment.route.ts:9' }],
      },
      dependencies: { stripe: '^20.0.0', fastify: '^5.0.0' },
    });
    const [pay, refund] = (ctx.config as Config).actions.map((a) => factsFor(ctx, a)!.calls.map((c) => c.operation));
    expect(pay).toEqual(['paymentIntents.create']);
    expect(refund).toEqual(['refunds.create']);
  });

  it('a method the service inherits, and the subclass method its base calls on this (template method)', () => {
    const abstract = `export abstract class AbstractPaymentService {
  abstract capturePayment(id: string): Promise<unknown>;
  public async modifyPayment(opts: { id: string }) {
    return await this.capturePayment(opts.id);
  }
}
`;
    const concrete = `import Stripe from 'stripe';
import { AbstractPaymentService } from './abstract-payment.service';
const stripe = new Stripe('sk_test');
export class StripePaymentService extends AbstractPaymentService {
  async capturePayment(id: string) {
    return stripe.paymentIntents.capture(id);
  }
}
`;
    const plugin = routes('type PaymentRoutesOptions = { paymentService: StripePaymentService };').replace('opts.paymentService.createPaymentIntent(request.body)', 'opts.paymentService.modifyPayment({ id: request.params.id })');
    const ctx = contextFor({
      name: 'fastify-inherited',
      files: { 'src/routes/stripe-payment.route.ts': plugin, 'src/services/abstract-payment.service.ts': abstract, 'src/services/stripe-payment.service.ts': concrete },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'fastify' }, payments: ['stripe'], actions: [{ ...action, name: 'modifyPayment', route: 'POST /payments', source: 'src/routes/stripe-payment.route.ts:5' }] },
      dependencies: { stripe: '^20.0.0', fastify: '^5.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.calls.map((c) => `${c.operation} ${c.file}:${c.line} via ${c.via}`)).toEqual(['paymentIntents.capture src/services/stripe-payment.service.ts:6 via capturePayment']);
  });

  it('the options interface imported from another file, and a parameter typed with the class itself', () => {
    const imported = routes("import type { PaymentRoutesOptions } from './options';");
    const facts = factsOf({
      'src/routes/stripe-payment.route.ts': imported,
      'src/routes/options.ts': "import { StripePaymentService } from '../services/stripe-payment.service';\nexport interface PaymentRoutesOptions {\n  paymentService: StripePaymentService;\n}\n",
    });
    expect(facts.calls.map((c) => c.operation)).toEqual(['paymentIntents.create']);
    const direct = routes('type PaymentRoutesOptions = { x: 1 };').replace(
      'async (request, reply) => {\n    const resp = await opts.paymentService.createPaymentIntent(request.body);',
      'async (request, reply) => {\n    const resp = await charge(request.body, opts.paymentService);',
    ) + 'async function charge(body: unknown, service: StripePaymentService) {\n  return service.createPaymentIntent(body);\n}\n';
    expect(factsOf({ 'src/routes/stripe-payment.route.ts': direct }).calls.map((c) => c.operation)).toEqual(['paymentIntents.create']);
  });
});

describe('code facts see provider calls made over raw HTTP, as inspect does', () => {
  const config = (framework: string) => ({ ...base, stack: { ...base.stack, language: 'typescript', framework }, payments: ['paypal'], actions: [{ ...action, name: 'captureOrder', route: 'POST /orders/capture', source: 'src/orders.controller.ts:6' }] });
  const controller = `import { Body, Controller, Post } from '@nestjs/common';
import { PaypalService } from './paypal.service';
@Controller('orders')
export class OrdersController {
  constructor(private readonly paypal: PaypalService) {}
  @Post('capture')
  capture(@Body() dto: { orderId: string }) {
    return this.paypal.capture(dto.orderId);
  }
}
`;

  it('an axios instance with PayPal base URL: the capture is a moves-money call, unkeyed, and the client has no time-out', () => {
    const ctx = contextFor({
      name: 'paypal-axios',
      files: {
        'src/orders.controller.ts': controller,
        'src/paypal.service.ts': `import axios from 'axios';
export class PaypalService {
  private readonly http = axios.create({ baseURL: process.env.PAYPAL_API_URL });
  async capture(orderId: string) {
    const res = await this.http.post(\`/v2/checkout/orders/\${orderId}/capture\`, {});
    return res.data;
  }
}
`,
      },
      config: config('nestjs'),
      dependencies: { axios: '^1.7.0', '@nestjs/common': '^10.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.calls).toEqual([{ provider: 'paypal', operation: 'v2/checkout/orders/{id}/capture', risk: 'moves-money', file: 'src/paypal.service.ts', line: 5, keyed: false, via: 'capture' }]);
    expect(facts.budgets).toEqual([{ provider: 'paypal', timeoutMs: null, attempts: 1, evidence: 'raw HTTP calls in src/paypal.service.ts set no time-out, and axios and got have none by default', http: true }]);
  });

  it('fetch with the PayPal-Request-Id header: keyed, and bounded by undici unless the client sets a time-out', () => {
    const service = (extra: string) => `export class PaypalService {
  async capture(orderId: string) {
    return fetch(\`https://api-m.paypal.com/v2/checkout/orders/\${orderId}/capture\`, { method: 'POST', headers: { 'PayPal-Request-Id': orderId }${extra} });
  }
}
`;
    const facts = (extra: string) => {
      const ctx = contextFor({ name: 'paypal-fetch', files: { 'src/orders.controller.ts': controller, 'src/paypal.service.ts': service(extra) }, config: config('nestjs'), dependencies: { '@nestjs/common': '^10.0.0' } });
      return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    };
    expect(facts('').calls.map((c) => [c.operation, c.keyed])).toEqual([['v2/checkout/orders/{id}/capture', true]]);
    expect(facts('').budgets[0]?.timeoutMs).toBe(300_000);
    expect(facts(', signal: AbortSignal.timeout(15_000)').budgets[0]?.timeoutMs).toBe(15_000);
  });
});

describe('code facts resolve imports as inspect does', () => {
  it('`@/` in a monorepo package resolves to that package\'s src, not the repository root', () => {
    const ctx = contextFor({
      name: 'monorepo-alias',
      files: {
        'apps/api/src/routes/refund.ts': `import { refund } from '@/services/payments';
export async function POST(req: Request) {
  const { id } = await req.json();
  return Response.json(await refund(id));
}
`,
        'apps/api/src/services/payments.ts': `import Stripe from 'stripe';
const stripe = new Stripe('sk_test');
export const refund = (pi: string) => stripe.refunds.create({ payment_intent: pi });
`,
        // Same path at the root: must not be taken for the package's own module.
        'src/services/payments.ts': `export const refund = (pi: string) => pi;\n`,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nextjs' }, payments: ['stripe'], actions: [{ ...action, name: 'refund', route: 'POST /api/refund', source: 'apps/api/src/routes/refund.ts:2' }] },
      dependencies: { stripe: '^14.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.calls.map((c) => `${c.operation} ${c.file}:${c.line}`)).toEqual(['refunds.create apps/api/src/services/payments.ts:3']);
  });
});

describe('TypeORM repository writes', () => {
  // The shape of w3tecch/express-typescript-boilerplate@1772701 (src/api/services/PetService.ts).
  const writesOf = (body: string) => {
    const ctx = contextFor({
      name: 'typeorm-writes',
      files: {
        'index.js': `const express = require('express');
const { v1 } = require('uuid');
const app = express();
app.post('/pets', async (req, res) => {
${body}
  res.sendStatus(201);
});
`,
      },
      config: { ...base, actions: [{ ...action, name: 'createPet', route: 'POST /pets', source: 'index.js:4' }] },
      dependencies: { express: '^4.0.0', typeorm: '^0.3.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!.writes.map((w) => `${w.kind} ${w.target}${w.freshKey ? ` fresh ${w.freshKey}` : ''}`);
  };

  it('save inserts (a fresh id: never meets the row a retry wrote), or updates when the id comes from the request', () => {
    expect(writesOf('  const pet = req.body;\n  await this.petRepository.save(pet);')).toEqual(['create pet']);
    expect(writesOf('  const pet = req.body;\n  pet.id = v1();\n  await this.petRepository.save(pet);')).toEqual(['create pet fresh v1()']);
    expect(writesOf('  const pet = req.body;\n  pet.id = req.params.id;\n  await petRepo.save(pet);')).toEqual(['update pet']);
  });

  it('saving an entity the function read (findOne, findOneBy, preload) updates its row; a new one, reassigned from a read, too', () => {
    expect(writesOf('  const author = await this.userRepository.findOne({ where: { id: req.user.id } });\n  author.bio = req.body.bio;\n  await this.userRepository.save(author);')).toEqual(['update user']);
    expect(writesOf('  let article = new Article();\n  article = await this.articleRepository.findOneBy({ slug: req.params.slug });\n  await this.articleRepository.save(article);')).toEqual(['update article']);
    expect(writesOf('  const pet = new Pet();\n  pet.name = req.body.name;\n  await this.petRepository.save(pet);')).toEqual(['create pet']);
  });

  it('names the entity from getRepository(Entity), an EntityManager call, or the repository; a delete is not a table named after its argument', () => {
    expect(writesOf('  await dataSource.getRepository(Order).insert(req.body);')).toEqual(['create Order']);
    expect(writesOf('  await manager.save(Order, req.body);')).toEqual(['create Order']);
    expect(writesOf('  const id = req.params.id;\n  await this.userRepository.delete(id);')).toEqual(['delete user']);
    // Not a repository: nothing claimed.
    expect(writesOf('  await cache.save(req.body);')).toEqual([]);
  });
});

describe("whether a handler writes through the claim's transaction", () => {
  const withHandler = (body: string) => {
    const ctx = contextFor({
      name: 'claim-tx',
      files: { 'index.js': `const express = require('express');\nconst { pool } = require('./db');\nconst { idempotencyOf } = require('./src/idempotency/express');\nexpress().post('/api/payments', async (req, res) => {\n${body}\n  res.json({});\n});\n` },
      config: { ...base, actions: [{ ...action, source: 'index.js:4' }] },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!);
  };

  it("a write through the project's pool is its own: no claimTransaction", () => {
    const facts = withHandler(`  await pool.query('INSERT INTO payments (amount) VALUES ($1)', [req.body.amount]);`);
    expect(facts?.writes.map((w) => w.target)).toEqual(['payments']);
    expect(facts?.claimTransaction).toBeUndefined();
  });

  it('idempotencyOf(req).db, or db destructured from it, is the claim\'s transaction', () => {
    expect(withHandler(`  await idempotencyOf(req)!.db.query('INSERT INTO payments (amount) VALUES ($1)', [req.body.amount]);`)?.claimTransaction).toBe(true);
    expect(withHandler(`  const { db } = idempotencyOf(req);\n  await db.query('INSERT INTO payments (amount) VALUES ($1)', [req.body.amount]);`)?.claimTransaction).toBe(true);
  });
});

describe('messages a duplicate sends again', () => {
  // The shape of hagopj13/node-express-boilerplate@179ae84: the controller takes `emailService` from the services
  // index, whose `sendVerificationEmail` calls `sendEmail`, which calls `transport.sendMail` on nodemailer's transport.
  const mailer = (emailService: string) => contextFor({
    name: 'message-sends',
    files: {
      'src/routes/auth.route.js': "const express = require('express');\nconst authController = require('../controllers/auth.controller');\nconst router = express.Router();\nrouter.post('/send-verification-email', authController.sendVerificationEmail);\nmodule.exports = router;\n",
      'src/controllers/auth.controller.js': "const { tokenService, emailService } = require('../services');\nconst sendVerificationEmail = async (req, res) => {\n  const token = await tokenService.generateVerifyEmailToken(req.user);\n  await emailService.sendVerificationEmail(req.user.email, token);\n  res.status(204).send();\n};\nmodule.exports = { sendVerificationEmail };\n",
      'src/services/index.js': "module.exports.emailService = require('./email.service');\nmodule.exports.tokenService = require('./token.service');\n",
      'src/services/token.service.js': "const { Token } = require('../models');\nconst generateVerifyEmailToken = async (user) => Token.create({ user: user.id });\nmodule.exports = { generateVerifyEmailToken };\n",
      'src/services/email.service.js': emailService,
      'src/config/mailer.js': "const nodemailer = require('nodemailer');\nconst transport = nodemailer.createTransport({ host: 'localhost' });\nmodule.exports = transport;\n",
    },
    config: { ...base, payments: [], stack: { ...base.stack, database: 'mongodb' }, actions: [{ name: 'sendVerificationEmail', trigger: 'http', route: 'POST /v1/auth/send-verification-email', significantFields: ['email'], source: 'src/routes/auth.route.js:4' }] },
    dependencies: { mongoose: '^8.0.0', nodemailer: '^6.9.0' },
  });
  const helpers = "const sendEmail = async (to, subject, text) => {\n  await transport.sendMail({ to, subject, text });\n};\nconst sendVerificationEmail = async (to, token) => {\n  await sendEmail(to, 'Verify', token);\n};\nmodule.exports = { sendEmail, sendVerificationEmail };\n";

  it('follows the handler through the services index and two helpers to nodemailer, after the Token insert', () => {
    const ctx = mailer(`const nodemailer = require('nodemailer');\nconst transport = nodemailer.createTransport({});\n${helpers}`);
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
    expect(facts?.writes.map((w) => `${w.kind} ${w.target}`)).toEqual(['create Token']);
    expect(facts?.messages).toEqual([{ channel: 'email', library: 'nodemailer', operation: 'sendMail', file: 'src/services/email.service.js', line: 4, keyed: false, via: 'sendEmail' }]);
    const design = codeDesign(facts!);
    expect(describeFromCode(design, 'MongoDB')).toBe('The handler `sendVerificationEmail` at `src/controllers/auth.controller.js:2` inserts into `Token` (`src/services/token.service.js:2`) in MongoDB, then sends an e-mail through nodemailer (`src/services/email.service.js:4`, through `sendEmail`).');
    expect(impactFromCode(design, 'http')).toEqual({ text: 'A duplicate request sends the e-mail again to the same person (nodemailer, `src/services/email.service.js:4`), and inserts a second row into `Token`.', severity: 'external' });
    // The rollout quotes the sentence up to its first colon: not the one in `file:line`.
    const model = buildDesign(ctx.config as Config, undefined, { now: new Date('2026-01-15T00:00:00Z'), code: [facts!] });
    expect(model.buildOrder.find((s) => s.title === 'Enforce on sendVerificationEmail')?.detail).toBe('The highest-risk action (a duplicate request sends the e-mail again to the same person (nodemailer, src/services/email.service.js:4), and inserts a second row into Token) goes first. Remove its "rollout" (or set it to "enforce") and run generate: from then on a repeat gets the stored response, records written in log-only mode included.');
  });

  it('a transport another project module makes and exports', () => {
    const ctx = mailer(`const transport = require('../config/mailer');\n${helpers}`);
    expect(factsFor(ctx, (ctx.config as Config).actions[0]!)?.messages?.map((m) => `${m.library} ${m.file}:${m.line}`)).toEqual(['nodemailer src/services/email.service.js:3']);
  });

  it('an SMS through Twilio (client.messages.create) is a message, not a write to a `messages` table', () => {
    const ctx = mailer("const twilio = require('twilio');\nconst client = twilio('sid', 'token');\nconst sendVerificationEmail = async (to, token) => client.messages.create({ to, body: token });\nmodule.exports = { sendVerificationEmail };\n");
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
    expect(facts?.writes.map((w) => w.target)).toEqual(['Token']);
    expect(facts?.messages?.map((m) => `${m.channel} ${m.library} ${m.operation}`)).toEqual(['sms twilio messages.create']);
    expect(describeFromCode(codeDesign(facts!), 'MongoDB')).toContain('then sends an SMS through Twilio (`src/services/email.service.js:3`).');
  });

  it('Resend with its idempotency key: stable, or made anew on each call (then the copy still goes out again)', () => {
    const resend = (key: string) => {
      const ctx = mailer(`import { Resend } from 'resend';\nconst resend = new Resend('re_key');\nconst sendVerificationEmail = async (to, token) => resend.emails.send({ to, text: token }, { idempotencyKey: ${key} });\nmodule.exports = { sendVerificationEmail };\n`);
      return codeDesign(factsFor(ctx, (ctx.config as Config).actions[0]!)!);
    };
    const stable = resend('`verify/${token}`');
    expect(stable.messages).toEqual([{ channel: 'email', library: 'resend', location: 'src/services/email.service.js:3', keyed: true }]);
    expect(describeFromCode(stable, 'MongoDB')).toContain('then sends an e-mail through Resend (`src/services/email.service.js:3`, with an idempotency key).');
    expect(impactFromCode(stable, 'http').text).toBe('A duplicate request sends the e-mail again to the same person unless the idempotency key it passes (Resend, `src/services/email.service.js:3`) is the same on the retry, and inserts a second row into `Token`.');
    const fresh = resend('randomUUID()');
    expect(fresh.messages?.[0]?.keyPerAttempt).toBe(true);
    expect(impactFromCode(fresh, 'http').text).toBe('A duplicate request sends the e-mail again to the same person (Resend, `src/services/email.service.js:3`), and inserts a second row into `Token`.');
  });

  it('a project function named like a send is no message', () => {
    const ctx = mailer(`const transport = { sendMail: async () => {} };\n${helpers}`);
    expect(factsFor(ctx, (ctx.config as Config).actions[0]!)?.messages).toBeUndefined();
  });
});

describe('objects made by a factory are followed into the factory\'s returned methods (fastify/demo@1f50cc1)', () => {
  const repository = `import fp from 'fastify-plugin';
function createRepository(fastify) {
  const knex = fastify.knex;
  return {
    async create(newTask) {
      const [id] = await knex<Task>('tasks').insert(newTask);
      return id;
    },
    async update(id, changes, trx) {
      const affected = await (trx ?? knex)('tasks').where({ id }).update(changes);
      return affected > 0 ? this.findById(id) : null;
    },
    findById: (id) => fastify.knex<Task>('tasks').where({ id }).first(),
  };
}
export default fp(function (fastify) {
  fastify.decorate('tasksRepository', createRepository(fastify));
});
`;
  const factsOf = (route: string, handlerLine: number, routes: string) => {
    const ctx = contextFor({
      name: 'factory-objects',
      files: { 'src/plugins/tasks-repository.ts': repository, 'src/routes/tasks.ts': routes },
      config: { ...base, actions: [{ ...action, name: 'act', route, source: `src/routes/tasks.ts:${handlerLine}` }] },
      dependencies: { fastify: '^5.0.0', knex: '^3.0.0', mysql2: '^3.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };

  it('a Fastify decorator, destructured from the instance: the insert is read where knex names its table', () => {
    const facts = factsOf('POST /tasks', 3, `export default async function (fastify) {
  const { tasksRepository } = fastify;
  fastify.post('/tasks', async function (request, reply) {
    const id = await tasksRepository.create({ ...request.body, status: 'new' });
    return reply.code(201).send({ id });
  });
}
`);
    expect(facts.writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`)).toEqual(['create tasks src/plugins/tasks-repository.ts:6']);
  });

  it('reached as fastify.<decorator>, the write read in the repository replaces the guess from its name', () => {
    const facts = factsOf('POST /tasks/:id/assign', 2, `export default async function (fastify) {
  fastify.post('/tasks/:id/assign', async function (request) {
    return fastify.tasksRepository.update(request.params.id, { assigned_user_id: request.body.userId });
  });
}
`);
    expect(facts.writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`)).toEqual(['update tasks src/plugins/tasks-repository.ts:10']);
  });

  it('a factory called in the same file: const repo = createRepository(db)', () => {
    const ctx = contextFor({
      name: 'factory-local',
      files: {
        'index.js': `const express = require('express');
const app = express();
function createOrders(db) {
  async function place(order) {
    return db('orders').insert(order);
  }
  return { place, cancel: async (id) => db('orders').where({ id }).del() };
}
const orders = createOrders(knex);
app.post('/orders', async (req, res) => {
  res.json(await orders.place(req.body));
});
`,
      },
      config: { ...base, actions: [{ ...action, name: 'placeOrder', route: 'POST /orders', source: 'index.js:10' }] },
      dependencies: { express: '^4.0.0', knex: '^3.0.0', pg: '^8.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.writes.map((w) => `${w.kind} ${w.target} :${w.line}`)).toEqual(['create orders :5']);
  });
});

describe('model writes and changes by an amount', () => {
  const factsOf = (body: string, dependencies: Record<string, string>) => {
    const ctx = contextFor({
      name: 'relative-writes',
      files: {
        'index.js': `const express = require('express');
const app = express();
app.post('/restock', async (req, res) => {
${body}
  res.sendStatus(204);
});
`,
      },
      config: { ...base, stack: { ...base.stack, database: 'sqlite' }, actions: [{ ...action, name: 'restock', route: 'POST /restock', source: 'index.js:3' }] },
      dependencies: { express: '^4.0.0', ...dependencies },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)!;
  };
  const writes = (body: string, dependencies: Record<string, string> = { mongoose: '^8.0.0' }) =>
    factsOf(body, dependencies).writes.map((w) => `${w.kind} ${w.target}${w.relative ? ` by ${w.relative.join('+') || '?'}` : ''}${w.database ? ` in ${w.database}` : ''}`);

  it("Mongoose's update methods (orders-bullmq's jobs), $inc read as a change by an amount, and an upsert option", () => {
    expect(writes('  await Product.findOneAndUpdate({ code: req.body.code }, { $inc: { stock: req.body.quantity } });')).toEqual(['update Product by stock in MongoDB']);
    expect(writes("  await Order.updateOne({ _id: req.body.id }, { $set: { status: 'paid' } });")).toEqual(['update Order in MongoDB']);
    expect(writes('  await Customer.findOneAndUpdate({ email: req.body.email }, { $setOnInsert: req.body }, { upsert: true, new: true });')).toEqual(['upsert Customer in MongoDB']);
    expect(writes('  await Order.create(req.body);\n  await Cart.deleteMany({ user: req.body.user });')).toEqual(['create Order in MongoDB', 'delete Cart in MongoDB']);
    // NestJS's injected model: this.orderModel → Order.
    expect(writes('  await this.orderModel.insertMany(req.body.orders);')).toEqual(['create Order in MongoDB']);
    // Built-ins are no models.
    expect(writes('  const copy = Object.create(null);\n  await Promise.race([]);')).toEqual([]);
  });

  it('Sequelize: update/destroy with a where option, increment; create is not told MongoDB without mongoose', () => {
    const sequelize = { sequelize: '^6.0.0', pg: '^8.0.0' };
    expect(writes("  await Wallet.increment('balance', { by: req.body.amount, where: { id: req.body.id } });", sequelize)).toEqual(['update Wallet by balance']);
    expect(writes("  await Order.update({ status: 'paid' }, { where: { id: req.body.id } });\n  await Hold.destroy({ where: { order: req.body.id } });", sequelize)).toEqual(['update Order', 'delete Hold']);
    expect(writes('  await Order.create(req.body);', sequelize)).toEqual(['create Order']);
    // A static `update` without a where option is not Sequelize's.
    expect(writes('  await Cache.update(req.body);', sequelize)).toEqual([]);
  });

  it('a capitalised create in a project with no model library is a domain factory, not an insert (cccat16_8@5101099)', () => {
    expect(writes('  const transaction = Transaction.create(req.body.rideId, req.body.amount);', { express: '^4.0.0' })).toEqual([]);
    expect(writes('  await Transaction.create({ rideId: req.body.rideId });', { sequelize: '^6.0.0' })).toEqual(['create Transaction']);
  });

  it("Prisma's increment, knex's increment, TypeORM's increment and SET x = x + … in SQL", () => {
    expect(writes('  await prisma.product.update({ where: { id: req.body.id }, data: { stock: { decrement: 1 }, name: req.body.name } });', { '@prisma/client': '^5.0.0' })).toEqual(['update product by stock']);
    expect(writes("  await knex('products').where({ id: req.body.id }).increment('stock', req.body.n);", { knex: '^3.0.0' })).toEqual(['update products by stock']);
    expect(writes("  await this.productRepository.increment({ id: req.body.id }, 'stock', 1);", { typeorm: '^0.3.0' })).toEqual(['update product by stock']);
    expect(writes("  await manager.decrement(Product, { id: req.body.id }, 'stock', 1);", { typeorm: '^0.3.0' })).toEqual(['update Product by stock']);
    expect(writes("  await db.query('UPDATE accounts SET balance = balance - $1, updated_at = now() WHERE id = $2', [req.body.amount, req.body.id]);", { pg: '^8.0.0' })).toEqual(['update accounts by balance']);
    expect(writes("  await db.query('UPDATE accounts SET balance = $1 WHERE id = $2', [req.body.balance, req.body.id]);", { pg: '^8.0.0' })).toEqual(['update accounts']);
  });

  it("a write whose promise the handler chains (.then / .catch) instead of awaiting (nestjs-super's token clean-up)", () => {
    expect(writes('  prisma.refreshToken.deleteMany({ where: { expiresAt: { lt: new Date() } } }).then(({ count }) => count).catch(() => undefined);', { '@prisma/client': '^6.0.0' })).toEqual(['delete refreshToken']);
    expect(writes("  knex('tasks').insert(req.body).then(() => undefined);", { knex: '^3.0.0' })).toEqual(['create tasks']);
    const design = codeDesign(factsOf('  prisma.refreshToken.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch(() => undefined);', { '@prisma/client': '^6.0.0' }));
    expect(impactFromCode(design, 'cron').text).toBe('Running the same slot twice deletes from `refreshToken` again, which leaves the same state: what the first run deleted is gone already (a repeat that runs later deletes whatever matches by then).');
  });

  it('the design says a duplicate applies the change again, and names the database each write goes to', () => {
    const design = codeDesign(factsOf('  await Product.findOneAndUpdate({ code: req.body.code }, { $inc: { stock: req.body.quantity } });', { mongoose: '^8.0.0' }));
    expect(impactFromCode(design, 'consumer')).toEqual({ text: 'Handling the same message twice applies the change to `stock` of `Product` a second time: the count is off by one application, and no constraint notices.', severity: 'data' });
    expect(describeFromCode(design, 'SQLite')).toBe('The handler at `index.js:3` updates `Product` (`index.js:4`; changes `stock` by an amount, not to a value) in MongoDB.');
  });
});

describe('a worker that dispatches by job name reaches every job class', () => {
  // The shape of Larriche/orders-bullmq@be502b6: the BullMQ processor looks the job up in a registry typed with an
  // interface no class names in `implements`, and calls its handle(); the job classes extend a base that has it.
  const files = {
    'src/types.ts': `export interface IJob {
  name: string;
  handle(data: unknown): Promise<unknown>;
  fail(error: Error): void;
  complete?(data?: unknown): void;
}
`,
    'src/registry.ts': `import { IJob } from './types';
export class Registry {
  private jobs = new Map<string, new () => IJob>();
  getJob(name: string): IJob {
    const Job = this.jobs.get(name)!;
    return new Job();
  }
}
`,
    'src/worker.ts': `import { Worker } from 'bullmq';
import { Registry } from './registry';
const registry = new Registry();
export function start() {
  return new Worker('orders', async (job) => {
    const handler = registry.getJob(job.name);
    return await handler.handle(job.data);
  });
}
`,
    'src/jobs/base.ts': `export class BaseJob {
  name = 'base';
  async handle(data: unknown): Promise<unknown> {
    throw new Error('override handle');
  }
  fail(error: Error) {}
}
`,
    'src/jobs/restock.ts': `import { BaseJob } from './base';
import { Product } from '../models';
export class Restock extends BaseJob {
  async handle(data: { code: string; quantity: number }) {
    await Product.findOneAndUpdate({ code: data.code }, { $inc: { stock: data.quantity } });
  }
}
`,
    'src/jobs/placeOrder.ts': `import { BaseJob } from './base';
import { Order, Product } from '../models';
export class PlaceOrder extends BaseJob {
  async handle(data: { code: string }) {
    await Order.create({ code: data.code });
    await Product.updateOne({ code: data.code }, { $inc: { stock: -1 } });
  }
}
`,
  };

  it('follows handler.handle() into each class shaped like the interface, and the design groups the writes', () => {
    const ctx = contextFor({
      name: 'job-dispatch',
      files,
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'none', database: 'redis', broker: 'bullmq' }, actions: [{ name: 'consumeOrders', trigger: 'consumer', significantFields: ['payload'], source: 'src/worker.ts:5' }] },
      dependencies: { bullmq: '^5.0.0', mongoose: '^8.0.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}${w.relative ? ` by ${w.relative.join('+')}` : ''}`)).toEqual([
      'update Product src/jobs/restock.ts:5 by stock',
      'create Order src/jobs/placeOrder.ts:5',
      'update Product src/jobs/placeOrder.ts:6 by stock',
    ]);
    const design = codeDesign(facts);
    expect(describeFromCode(design, 'Redis')).toContain('updates `Product` (`src/jobs/restock.ts:5`, `src/jobs/placeOrder.ts:6`; changes `stock` by an amount, not to a value), inserts into `Order` (`src/jobs/placeOrder.ts:5`) in MongoDB');
    expect(impactFromCode(design, 'consumer').text).toBe('Handling the same message twice inserts a second row into `Order`, and applies the change to `stock` of `Product` a second time: two records for one intent.');
  });

  it('no dispatch through a lookup that declares no return type', () => {
    const untyped = { ...files, 'src/registry.ts': files['src/registry.ts'].replace('getJob(name: string): IJob {', 'getJob(name: string) {') };
    const ctx = contextFor({
      name: 'job-dispatch-untyped',
      files: untyped,
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'none', database: 'redis', broker: 'bullmq' }, actions: [{ name: 'consumeOrders', trigger: 'consumer', significantFields: ['payload'], source: 'src/worker.ts:5' }] },
      dependencies: { bullmq: '^5.0.0', mongoose: '^8.0.0' },
    });
    expect(factsFor(ctx, (ctx.config as Config).actions[0]!)!.writes).toEqual([]);
  });
});

describe('events a handler publishes to a broker', () => {
  it('a command fetched from a DI container publishes to Kafka: the design says a duplicate publishes it again (Bun-Hono-KafkaJS-Boilerplate@768db55)', () => {
    const ctx = contextFor({
      name: 'publishes',
      files: {
        'src/routes.ts': `import { Container } from 'typedi';
import { CreateProductCommand } from './commands';
app.post('/products', async (c) => {
  const command = Container.get(CreateProductCommand);
  return c.json(await command.execute(await c.req.json()), 201);
});
`,
        'src/commands.ts': `import { productCreated } from './events';
export class CreateProductCommand {
  async execute(input: { name: string }) {
    await productCreated(input);
    return input;
  }
}
`,
        'src/events.ts': `import { producer } from './kafka';
export async function productCreated(product: unknown) {
  await producer.send({ topic: 'products.created', messages: [{ value: JSON.stringify(product) }] });
}
`,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'hono', broker: 'kafka' }, actions: [{ ...action, name: 'createProduct', route: 'POST /products', source: 'src/routes.ts:3' }] },
      dependencies: { hono: '^4.0.0', kafkajs: '^2.2.4', typedi: '^0.10.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    expect(facts.publishes).toEqual([{ broker: 'kafka', topic: 'products.created', file: 'src/events.ts', line: 3, via: 'productCreated' }]);
    const design = codeDesign(facts);
    expect(describeFromCode(design, 'PostgreSQL')).toBe('The handler at `src/routes.ts:3` publishes `products.created` to Kafka (`src/events.ts:3`, through `productCreated`).');
    expect(impactFromCode(design, 'http')).toEqual({ text: 'A duplicate request publishes `products.created` to Kafka again (`src/events.ts:3`), and every consumer of it handles it twice.', severity: 'external' });
  });
});

describe('a queue processor class registered by its decorator (nestjs-super@8e6b270)', () => {
  const processor = (body: string) => `import { Processor, WorkerHost } from '@nestjs/bullmq';
import { PaymentRepository } from './payment.repo';

@Processor('payment')
export class PaymentConsumer extends WorkerHost {
  constructor(private readonly payments: PaymentRepository) {
    super();
  }
${body}
}
`;
  const repository = `export class PaymentRepository {
  async cancel(id: number) {
    await prisma.payment.update({ where: { id }, data: { status: 'FAILED' } });
  }
}
declare const prisma: any;
`;
  const writesOf = (body: string) => {
    const ctx = contextFor({
      name: 'nest-bullmq',
      files: { 'src/payment.consumer.ts': processor(body), 'src/payment.repo.ts': repository },
      config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'nestjs', broker: 'bullmq' }, actions: [{ name: 'consumePayment', trigger: 'consumer', route: 'payment', significantFields: ['paymentId'], source: 'src/payment.consumer.ts:4' }] },
      dependencies: { '@nestjs/bullmq': '^11.0.0', '@prisma/client': '^6.0.0' },
    });
    return factsFor(ctx, (ctx.config as Config).actions[0]!)?.writes.map((w) => `${w.kind} ${w.target} ${w.file}:${w.line}`);
  };

  it('reads process() for the @Processor line, and the handle apply moved into a processOnce field', () => {
    expect(writesOf('  async process(job: any): Promise<any> {\n    await this.payments.cancel(job.data.paymentId);\n  }')).toEqual(['update payment src/payment.repo.ts:3']);
    const wired = `  private readonly processOnce = bullmqProcessor({
    core: idempotency.core,
    action: ACTIONS.consumePayment,
    handle: async (job: any) => {
      await this.payments.cancel(job.data.paymentId);
    },
  });

  async process(job: any): Promise<any> {
    return this.processOnce(job);
  }`;
    expect(writesOf(wired)).toEqual(['update payment src/payment.repo.ts:3']);
  });
});

describe('Mongoose model statics', () => {
  // async-labs/saas@4b27b6a: the route calls Team.cancelSubscription, a static the schema loads from TeamClass.
  const model = (statics: string) => `import * as mongoose from 'mongoose';
import { cancelSubscription } from '../stripe';
const mongoSchema = new mongoose.Schema({ isSubscriptionActive: Boolean });
${statics}
const Team = mongoose.model<any, any>('Team', mongoSchema);
export default Team;
`;
  const factsOf = (statics: string) => {
    const ctx = contextFor({
      name: 'mongoose-statics',
      files: {
        'server/api/team-leader.ts': `import * as express from 'express';
import Team from '../models/Team';
const router = express.Router();
router.post('/cancel-subscription', async (req: any, res) => {
  res.json(await Team.cancelSubscription({ teamId: req.body.teamId }));
});
`,
        'server/models/Team.ts': model(statics),
        'server/stripe.ts': `import Stripe from 'stripe';
const stripe = new Stripe('sk');
export function cancelSubscription({ subscriptionId }: { subscriptionId: string }) {
  return stripe.subscriptions.cancel(subscriptionId);
}
`,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', database: 'mongodb' }, payments: ['stripe'], actions: [{ ...action, name: 'cancelSubscription', route: 'POST /cancel-subscription', source: 'server/api/team-leader.ts:4' }] },
      dependencies: { express: '^4.18.2', mongoose: '^8.0.3', stripe: '^14.8.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    return [...facts.calls.map((c) => `${c.operation} :${c.line}`), ...facts.writes.map((w) => `${w.kind} ${w.target}${w.database ? ` in ${w.database}` : ''} :${w.line}`)];
  };

  it('schema.loadClass(TeamClass): the static method, and `this` in it is the model (a query chain read through)', () => {
    const statics = `class TeamClass extends mongoose.Model {
  public static async cancelSubscription({ teamId }) {
    const team = await this.findById(teamId).select('stripeSubscription');
    const cancelled = await cancelSubscription({ subscriptionId: team.stripeSubscription.id });
    return this.findByIdAndUpdate(teamId, { stripeSubscription: cancelled, isSubscriptionActive: false }, { new: true })
      .select('isSubscriptionActive')
      .setOptions({ lean: true });
  }
}
mongoSchema.loadClass(TeamClass);`;
    expect(factsOf(statics)).toEqual(['subscriptions.cancel :4', 'update Team in MongoDB :8']);
  });

  it('schema.statics.name = function and schema.static(name, fn)', () => {
    const assigned = `mongoSchema.statics.cancelSubscription = async function ({ teamId }) {
  await cancelSubscription({ subscriptionId: teamId });
};`;
    expect(factsOf(assigned)).toEqual(['subscriptions.cancel :4']);
    const called = `mongoSchema.static('cancelSubscription', async function ({ teamId }) {
  await cancelSubscription({ subscriptionId: teamId });
});`;
    expect(factsOf(called)).toEqual(['subscriptions.cancel :4']);
  });

  it('an instance method of the loaded class is not a static; `this` in it is a document', () => {
    const statics = `class TeamClass {
  async cancelSubscription() {
    await this.updateOne({ isSubscriptionActive: false });
  }
}
mongoSchema.loadClass(TeamClass);`;
    // The method is followed (the call reaches it), but its `this` writes nothing the facts can name.
    expect(factsOf(statics)).toEqual([]);
  });
});

describe('default exports', () => {
  // cgarrovillo/ecommerce@30efd95: routes.ts registers a default-imported handler that calls a default-imported helper.
  it('a default-imported handler and a default-imported helper are followed (export default name, arrow, function, module.exports)', () => {
    const exportsOf: Record<string, (body: string) => string> = {
      name: (body) => `const placeOrder = async (session: any) => {\n${body}\n};\nexport default placeOrder;\n`,
      arrow: (body) => `export default async (session: any) => {\n${body}\n};\n`,
      function: (body) => `export default async function placeOrder(session: any) {\n${body}\n}\n`,
      commonjs: (body) => `const placeOrder = async (session) => {\n${body}\n};\nmodule.exports = placeOrder;\n`,
    };
    for (const [shape, helper] of Object.entries(exportsOf)) {
      const ctx = contextFor({
        name: `default-${shape}`,
        files: {
          'src/routes.ts': "import Router from '@koa/router';\nimport completed from './session-complete';\nconst router = new Router();\nrouter.post('/webhooks/complete', completed);\nexport default router;\n",
          'src/session-complete.ts': "import placeOrder from './placeOrder';\nconst completed = async (ctx: any) => {\n  await placeOrder(ctx.request.body);\n  ctx.status = 200;\n};\nexport default completed;\n",
          'src/placeOrder.ts': `import Stripe from 'stripe';\nconst stripe = new Stripe('sk');\n${helper('  await stripe.paymentIntents.create({ amount: session.amount, currency: "usd" });')}`,
        },
        config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'koa' }, payments: ['stripe'], actions: [{ ...action, name: 'completed', route: 'POST /webhooks/complete', source: 'src/routes.ts:4' }] },
        dependencies: { koa: '^2.13.1', '@koa/router': '^10.0.0', stripe: '^14.8.0' },
      });
      const facts = factsFor(ctx, (ctx.config as Config).actions[0]!);
      expect(facts?.handler.file, shape).toBe('src/session-complete.ts');
      expect(facts?.calls.map((c) => `${c.operation} ${c.file}`), shape).toEqual(['paymentIntents.create src/placeOrder.ts']);
    }
  });
});

describe('a check that refuses a repeat', () => {
  const refusalOf = (body: string) => {
    const ctx = contextFor({
      name: 'refusal',
      files: {
        'index.ts': `import express from 'express';
import Stripe from 'stripe';
const stripe = new Stripe('sk');
express().post('/cancel-subscription', async (req: any, res: any) => {
${body}
  res.json({ ok: true });
});
declare const Team: any;
`,
      },
      config: { ...base, stack: { ...base.stack, language: 'typescript', database: 'mongodb' }, payments: ['stripe'], actions: [{ ...action, name: 'cancelSubscription', route: 'POST /cancel-subscription', source: 'index.ts:4' }] },
      dependencies: { express: '^4.18.2', mongoose: '^8.0.3', stripe: '^14.8.0' },
    });
    const facts = factsFor(ctx, (ctx.config as Config).actions[0]!)!;
    return { refusal: facts.refusal, impact: impactFromCode(codeDesign(facts), 'http').text };
  };
  const cancel = "  await stripe.subscriptions.cancel(team.subscriptionId);\n  await Team.updateOne({ _id: team._id }, { active: false });";

  it('async-labs/saas@4b27b6a: "already unsubscribed" thrown before the effects; the document says what a late retry gets', () => {
    const { refusal, impact } = refusalOf(`  const team = await Team.findById(req.body.teamId);\n  if (!team.active) throw new Error('Team is already unsubscribed.');\n${cancel}`);
    expect(refusal).toEqual({ file: 'index.ts', line: 6, message: 'Team is already unsubscribed.' });
    expect(impact).toMatch(/A repeat that starts after the first run finished stops earlier, at `index\.ts:6` \("Team is already unsubscribed\."\): the retry of a request whose answer was lost gets that error instead of the first run's result\. Only runs that overlap both pass that check\.$/);
  });

  it('a 409 exception counts; a missing record, or a check after the effects, does not', () => {
    expect(refusalOf(`  if (await Team.exists({ _id: req.body.teamId, active: false })) throw new ConflictException();\n${cancel}\ndeclare class ConflictException {}`).refusal?.message).toBe('ConflictException');
    expect(refusalOf(`  const team = await Team.findById(req.body.teamId);\n  if (!team) throw new Error('Team does not exist');\n${cancel}`).refusal).toBeUndefined();
    expect(refusalOf(`  const team = await Team.findById(req.body.teamId);\n${cancel}\n  if (team.notified) throw new Error('already notified');`).refusal).toBeUndefined();
  });
});

describe("a webhook route's own middleware", () => {
  it('its verifying middleware is in the spans of a webhook action, so findings there are the action\'s (cgarrovillo/ecommerce@30efd95)', () => {
    const files = {
      'src/routes.ts': "import Router from '@koa/router';\nimport verifyStripeSignature from './verify';\nimport completed from './complete';\nconst router = new Router();\nrouter.post('/webhooks/complete', verifyStripeSignature, completed);\nexport default router;\n",
      'src/verify.ts': "const verifyStripeSignature = (ctx: any, next: () => Promise<void>) => {\n  ctx.state.stripeEvent = stripe.webhooks.constructEvent(ctx.request.rawBody, 'sig', 'whsec');\n  return next();\n};\ndeclare const stripe: any;\nexport default verifyStripeSignature;\n",
      'src/complete.ts': 'export default async function completed(ctx: any) {\n  ctx.status = 200;\n}\n',
    };
    const spansOf = (trigger: string) => {
      const ctx = contextFor({ name: `middleware-${trigger}`, files, config: { ...base, stack: { ...base.stack, language: 'typescript', framework: 'koa' }, payments: ['stripe'], actions: [{ ...action, name: 'completed', trigger, route: 'POST /webhooks/complete', source: 'src/routes.ts:5' }] }, dependencies: { koa: '^2.13.1', stripe: '^14.8.0' } });
      return factsFor(ctx, (ctx.config as Config).actions[0]!)?.spans?.map((s) => `${s.file}:${s.from}-${s.to}`);
    };
    expect(spansOf('webhook')).toEqual(['src/complete.ts:1-3', 'src/verify.ts:1-4']);
    // An HTTP action's middleware (authentication, parsing) is shared by many routes: not followed.
    expect(spansOf('http')).toEqual(['src/complete.ts:1-3']);
  });
});

describe('a check that refuses a repeat, and input validation', () => {
  it('"Duplicate items in cart" validates the input: no refusal', () => {
    const ctx = contextFor({
      name: 'validation',
      files: { 'index.ts': "import express from 'express';\nexpress().post('/orders', async (req: any, res: any) => {\n  if (new Set(req.body.items).size !== req.body.items.length) throw new Error('Duplicate items in cart');\n  await Order.create(req.body);\n  res.json({ ok: true });\n});\ndeclare const Order: any;\n" },
      config: { ...base, stack: { ...base.stack, language: 'typescript', database: 'mongodb' }, actions: [{ ...action, name: 'createOrder', route: 'POST /orders', source: 'index.ts:2' }] },
      dependencies: { express: '^4.18.2', mongoose: '^8.0.3' },
    });
    expect(factsFor(ctx, (ctx.config as Config).actions[0]!)?.refusal).toBeUndefined();
  });
});
