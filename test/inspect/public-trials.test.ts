import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { tempProjectSync } from '../helpers/tempProject.js';

/** Shapes met in public repositories (issue #18), rebuilt as small self-made projects. */
const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-trials-');

describe('inspection of shapes from public repositories', () => {
  it('reports a webhook at the request handler that reaches the signature check through helpers, when routes are mounted in a loop', async () => {
    // The shape of my-jam-store/stripe-checkout-service@533c147: route modules exporting `action`, loaded by readdir.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { express: '^4.17.1', stripe: '^8.107.0' } }),
      'src/router.js': `const express = require('express');
const fs = require('fs');
const app = express();
for (const name of fs.readdirSync(__dirname + '/routes')) {
  const route = require('./routes/' + name);
  app[route.httpMethod]('/' + route.name, express.raw({ type: 'application/json' }), route.action);
}
module.exports = app;
`,
      'src/routes/create-order.js': `const stripe = load('services/stripe');
const orders = load('services/orders');
exports.name = 'order';
exports.httpMethod = 'post';
exports.action = async (req, res) => {
  const session = stripe.completedCheckoutSession(req.body, req.headers);
  await orders.create(session.id);
  res.sendStatus(200);
};
`,
      'src/services/stripe.js': `const stripe = require('stripe')(process.env.STRIPE_KEY);
function completedCheckoutSession(payload, headers) {
  return webhookEvent(payload, headers).data.object;
}
function webhookEvent(payload, headers) {
  return stripe.webhooks.constructEvent(payload, headers['stripe-signature'], process.env.WHSEC);
}
module.exports = { completedCheckoutSession };
`,
      'src/services/orders.js': 'exports.create = async (id) => id;\n',
    });
    const { findings } = await inspectProject(dir);
    expect(findings.filter((f) => f.kind === 'webhook').map((f) => [f.id, f.file, f.line])).toEqual([['stripe webhook src/routes/create-order.js', 'src/routes/create-order.js', 5]]);
  });

  it('names a node-cron job after the call that does its work, not after `new Date().toISOString()`', async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { 'node-cron': '^3.0.0' } }),
      'src/cron.ts': `import cron from 'node-cron';
import { enqueue } from './queue';
export function start(schedule: string) {
  cron.schedule(schedule, async () => {
    const payload = { at: new Date().toISOString(), stamp: JSON.stringify({ n: Date.now() }) };
    await enqueue('task', payload);
  });
}
`,
      'src/queue.ts': 'export async function enqueue(name: string, payload: unknown) { return { name, payload }; }\n',
    });
    const { findings } = await inspectProject(dir);
    expect(findings.filter((f) => f.kind === 'cron').map((f) => f.id)).toEqual(['node-cron enqueue']);
  });

  it('takes body fields from the handler each routes file imports, when two files export the same name', async () => {
    const handler = (fields: string[]) => `import type { FastifyReply, FastifyRequest } from 'fastify';
export async function create(request: FastifyRequest, reply: FastifyReply) {
  const { ${fields.join(', ')} } = request.body as Record<string, number>;
  return reply.status(201).send({ ${fields.join(', ')} });
}
`;
    const routes = (url: string) => `import type { FastifyInstance } from 'fastify';
import { create } from './create';
export async function routes(app: FastifyInstance) {
  app.post('${url}', create);
}
`;
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { fastify: '^4.0.0' } }),
      'src/checkins/create.ts': handler(['latitude', 'longitude']),
      'src/checkins/routes.ts': routes('/gyms/:gymId/check-ins'),
      'src/gyms/create.ts': handler(['title', 'phone', 'latitude']),
      'src/gyms/routes.ts': routes('/gyms'),
    });
    const { findings } = await inspectProject(dir);
    const fields = Object.fromEntries(findings.flatMap((f) => (f.kind === 'endpoint' ? [[f.file, [...(f.bodyFields ?? [])].sort()]] : [])));
    expect(fields).toEqual({ 'src/checkins/routes.ts': ['latitude', 'longitude'], 'src/gyms/routes.ts': ['latitude', 'phone', 'title'] });
  });

  it('reports a CommonJS controller webhook (`exports.x = async (req, res) =>`) once, at its route, as verified', async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { express: '^4.19.0', stripe: '^14.0.0' } }),
      'controllers/webhookController.js': `const stripe = require('stripe')(process.env.STRIPE_KEY);
exports.handleStripeWebhook = async (req, res) => {
  const event = stripe.webhooks.constructEvent(req.body, req.headers['stripe-signature'], process.env.WH);
  res.json({ received: event.id });
};
`,
      'routes/webhook.js': `const express = require('express');
const webhookController = require('../controllers/webhookController');
const router = express.Router();
router.post('/stripe', express.raw({ type: 'application/json' }), webhookController.handleStripeWebhook);
module.exports = router;
`,
      'app.js': "const express = require('express');\nconst app = express();\napp.use('/webhook', require('./routes/webhook'));\n",
    });
    const { findings } = await inspectProject(dir);
    const webhooks = findings.filter((f) => f.kind === 'webhook');
    expect(webhooks.map((f) => [f.file, f.kind === 'webhook' && f.verifiesSignature])).toEqual([['routes/webhook.js', true]]);
  });
  it('a webhook verified by the route\'s own middleware is one verified webhook at the route (cgarrovillo/ecommerce@30efd95)', async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { koa: '^2.13.1', '@koa/router': '^10.0.0', stripe: '^8.137.0' } }),
      'src/middleware/verifyStripeSign.ts': `import { Context, Next } from 'koa';
import { stripe } from '../util/stripe';
const verifyStripeSignature = (ctx: Context, next: Next) => {
  ctx.state.stripeEvent = stripe.webhooks.constructEvent(ctx.request.rawBody, ctx.request.headers['stripe-signature']!, 'whsec');
  return next();
};
export default verifyStripeSignature;
`,
      'src/util/stripe.ts': "import Stripe from 'stripe';\nexport const stripe = new Stripe('sk', { apiVersion: '2020-08-27' });\n",
      'src/controllers/session-complete.ts': "import { Context } from 'koa';\nconst checkoutSessionCompleted = async (ctx: Context) => {\n  ctx.status = 200;\n};\nexport default checkoutSessionCompleted;\n",
      'src/routes.ts': `import Router from '@koa/router';
import verifyStripeSignature from './middleware/verifyStripeSign';
import checkoutSessionCompleted from './controllers/session-complete';
const router = new Router({ prefix: '/v1' });
router.post('/webhooks/checkout/complete', verifyStripeSignature, checkoutSessionCompleted);
export default router;
`,
    });
    const { findings } = await inspectProject(dir);
    const webhooks = findings.filter((f) => f.kind === 'webhook');
    expect(webhooks.map((f) => f.kind === 'webhook' && [f.file, f.provider, f.verifiesSignature, f.route])).toEqual([['src/routes.ts', 'stripe', true, 'POST /v1/webhooks/checkout/complete']]);
  });
  it('reads a NestJS controller declared through the project own decorator, and imports rooted at baseUrl', async () => {
    // AlexKhomenko00/payment-proviers-integration@b97e8a8: @PaymentController('stripe') applies
    // Controller({ path: `${PAYMENT_CONTROLLER_PREFIX}/${prefix}` }); controllers import it as 'src/payment/...'.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { '@nestjs/common': '^10.0.0', '@nestjs/core': '^10.0.0', stripe: '^14.0.0' } }),
      'src/payment/payment.constants.ts': "export const PAYMENT_CONTROLLER_PREFIX = 'payment';\n",
      'src/payment/payment.controller.decorator.ts': `import { Controller, ControllerOptions, applyDecorators } from '@nestjs/common';
import { PAYMENT_CONTROLLER_PREFIX } from './payment.constants';
export function PaymentController(prefix: string): ClassDecorator {
  const controllerOptions: ControllerOptions = { path: \`\${PAYMENT_CONTROLLER_PREFIX}/\${prefix}\` };
  return applyDecorators(Controller(controllerOptions));
}
export const Unreadable = (prefix: string) => applyDecorators(Controller(process.env.PREFIX + prefix));
`,
      'src/payment/api/charges.controller.ts': `import { Body, Post } from '@nestjs/common';
import { PaymentController } from 'src/payment/payment.controller.decorator';
@PaymentController('stripe/charges')
export class ChargesController {
  @Post('create')
  async create(@Body('amount') amount: number) { return { amount }; }
}
`,
      'src/payment/api/refunds.controller.ts': `import { Body, Post } from '@nestjs/common';
import { Unreadable } from '../payment.controller.decorator';
@Unreadable('refunds')
export class RefundsController {
  @Post()
  async refund(@Body('charge') charge: string) { return { charge }; }
}
`,
      'src/payment/api/not-a-controller.ts': `import { Injectable } from '@nestjs/common';
@Injectable()
export class Helper { post() { return 1; } }
`,
    });
    const { findings } = await inspectProject(dir);
    const endpoints = findings.flatMap((f) => (f.kind === 'endpoint' ? [[f.id, f.prefixResolved, f.handler]] : []));
    expect(endpoints).toEqual(
      expect.arrayContaining([
        ['POST /payment/stripe/charges/create', true, 'ChargesController.create'],
        ['POST /refunds', false, 'RefundsController.refund'],
      ]),
    );
    expect(endpoints).toHaveLength(2);
  });
});

describe('routing-controllers', () => {
  // The shape of w3tecch/express-typescript-boilerplate@1772701: decorated controllers on an Express app started by
  // createExpressServer({ routePrefix }), DTO classes extending a base class.
  const files = (prefix: string) => ({
    'package.json': JSON.stringify({ dependencies: { express: '^4.16.2', 'routing-controllers': '^0.7.6', typeorm: '^0.2.5' } }),
    'src/app.ts': `import { createExpressServer } from 'routing-controllers';
import { env } from './env';
export const app = createExpressServer({ routePrefix: ${prefix}, controllers: [__dirname + '/controllers/*.ts'] });
`,
    'src/env.ts': "export const env = { app: { routePrefix: process.env.APP_ROUTE_PREFIX } };\n",
    'src/controllers/PetController.ts': `import { Authorized, Body, BodyParam, Delete, Get, JsonController, Method, Param, Post as HttpPost } from 'routing-controllers';
class BasePet {
  public name: string;
  public age: number;
}
class CreatePetBody extends BasePet {
  public userId: string;
}
@Authorized()
@JsonController('/pets')
export class PetController {
  constructor(private petService: { create(body: CreatePetBody): Promise<unknown> }) {}
  @Get()
  public find() { return []; }
  @HttpPost()
  public create(@Body({ required: true }) body: CreatePetBody) {
    return this.petService.create(body);
  }
  @Method('patch', '/:id/rename')
  public rename(@Param('id') id: string, @BodyParam('name') name: string) { return { id, name }; }
  @Delete('/:id')
  public remove(@Param('id') id: string) { return id; }
}
`,
  });

  it('reads routes from decorated controllers, with the body fields a DTO inherits, under a literal routePrefix', async () => {
    const { findings } = await inspectProject(project(files("'/api'")));
    const endpoints = findings.filter((f) => f.kind === 'endpoint');
    expect(endpoints.map((f) => [f.id, f.line, f.framework, f.prefixResolved, f.bodyFields ?? []])).toEqual([
      ['POST /api/pets', 15, 'routing-controllers', true, ['userId', 'name', 'age']],
      ['PATCH /api/pets/:id/rename', 19, 'routing-controllers', true, ['name']],
      ['DELETE /api/pets/:id', 21, 'routing-controllers', true, []],
    ]);
  });

  it('flags the paths unresolved when the routePrefix comes from the environment', async () => {
    const { findings } = await inspectProject(project(files('env.app.routePrefix')));
    const endpoints = findings.filter((f) => f.kind === 'endpoint');
    expect(endpoints.map((f) => [f.id, f.prefixResolved])).toEqual([
      ['POST /pets', false],
      ['PATCH /pets/:id/rename', false],
      ['DELETE /pets/:id', false],
    ]);
  });
});

describe('GraphQL mutations', () => {
  it('reads decorated resolvers (TypeGraphQL, NestJS) with their arguments, and resolver maps; queries are not endpoints', async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { express: '^4.16.2', 'type-graphql': '^0.15.0', '@apollo/server': '^4.0.0' } }),
      'src/PetResolver.ts': `import { Arg, Mutation, Query, Resolver } from 'type-graphql';
class PetInput {
  public name: string;
  public age: number;
}
@Resolver()
export class PetResolver {
  @Query(() => [String])
  public pets() { return []; }
  @Mutation(() => String)
  public async addPet(@Arg('pet') pet: PetInput) { return pet.name; }
  @Mutation(() => String, { name: 'removePet' })
  public async deletePet(@Arg('id') id: string) { return id; }
}
`,
      'src/orders.resolver.ts': `import { Args, Mutation, Resolver } from '@nestjs/graphql';
@Resolver()
export class OrdersResolver {
  @Mutation(() => String)
  placeOrder(@Args('sku') sku: string) { return sku; }
}
`,
      'src/resolvers.js': `export const resolvers = {
  Query: { orders: () => [] },
  Mutation: {
    refundOrder: async (_parent, { orderId, amount }) => ({ orderId, amount }),
    async cancelOrder(_parent, args) { return args.orderId; },
  },
};
`,
    });
    const { findings } = await inspectProject(dir);
    const endpoints = findings.filter((f) => f.kind === 'endpoint');
    expect(endpoints.map((f) => [f.id, f.file, f.line, f.framework, f.transport, f.prefixResolved, f.bodyFields ?? []])).toEqual([
      ['POST /addPet', 'src/PetResolver.ts', 10, 'graphql', 'graphql', false, ['pet', 'name', 'age']],
      ['POST /removePet', 'src/PetResolver.ts', 12, 'graphql', 'graphql', false, ['id']],
      ['POST /placeOrder', 'src/orders.resolver.ts', 4, 'graphql', 'graphql', false, ['sku']],
      ['POST /refundOrder', 'src/resolvers.js', 4, 'graphql', 'graphql', false, ['orderId', 'amount']],
      ['POST /cancelOrder', 'src/resolvers.js', 5, 'graphql', 'graphql', false, []],
    ]);
  });

  it('a timer in a React component polls a UI, it schedules no job; one at a server module\'s top level does', async () => {
    // The shape of Acosta-gh/Headless-E-commerce-…-MercadoPago@496a2fb: client/admin/src/context/AuthContext.jsx.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { react: '^18.0.0', express: '^5.0.0' } }),
      'client/src/context/AuthContext.jsx': `import { useEffect, useRef } from 'react';
export function AuthProvider({ children }) {
  const ref = useRef();
  useEffect(() => {
    ref.current = setInterval(() => {
      readToken();
    }, 60000);
    return () => clearInterval(ref.current);
  }, []);
  return children;
}
function readToken() {}
`,
      'server/jobs.js': `setInterval(() => {\n  expireHolds();\n}, 60000);\nfunction expireHolds() {}\n`,
    });
    const { findings } = await inspectProject(dir);
    expect(findings.filter((f) => f.kind === 'cron').map((f) => `${f.file}:${f.line}`)).toEqual(['server/jobs.js:1']);
  });

  it('a route naming a static method of a controller class re-exported as a default gets that method\'s body fields', async () => {
    // The shape of javieraviles/node-typescript-koa-rest@3233861: router.post('/users', user.createUser), with
    // `export { default as user } from './user'` and `export default class UserController { static async createUser … }`.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { koa: '^2.13.1', '@koa/router': '^10.0.0' } }),
      'src/routes.ts': `import Router from '@koa/router';\nimport Koa from 'koa';\nimport { user } from './controller';\n\nconst router = new Router();\nrouter.post('/users', user.createUser);\nnew Koa().use(router.routes()).listen(3000);\n`,
      'src/controller/index.ts': `export { default as user } from './user';\n`,
      'src/controller/user.ts': `export default class UserController {\n  public static async createUser(ctx: any): Promise<void> {\n    ctx.body = { name: ctx.request.body.name, email: ctx.request.body.email };\n  }\n}\n`,
    });
    const { findings } = await inspectProject(dir);
    const endpoint = findings.find((f) => f.kind === 'endpoint');
    expect(endpoint?.kind === 'endpoint' ? [endpoint.path, endpoint.bodyFields] : undefined).toEqual(['/users', ['name', 'email']]);
  });
  it('resolves routers mounted from a table in a loop, by property and by destructuring', async () => {
    // The shape of hagopj13/node-express-boilerplate@179ae84: `defaultRoutes.forEach((route) => router.use(route.path, route.route))`.
    const routes = (loop: string) => `const express = require('express');
const authRoute = require('./auth.route');
const userRoute = require('./user.route');
const router = express.Router();
const defaultRoutes = [
  { path: '/auth', route: authRoute },
  { path: '/users', route: userRoute },
];
${loop}
module.exports = router;
`;
    const files = (loop: string) => ({
      'package.json': JSON.stringify({ dependencies: { express: '^4.17.1' } }),
      'src/app.js': "const express = require('express');\nconst routes = require('./routes/v1');\nconst app = express();\napp.use('/v1', routes);\nmodule.exports = app;\n",
      'src/routes/v1/index.js': routes(loop),
      'src/routes/v1/auth.route.js': "const express = require('express');\nconst router = express.Router();\nrouter.post('/register', (req, res) => res.send());\nmodule.exports = router;\n",
      'src/routes/v1/user.route.js': "const express = require('express');\nconst router = express.Router();\nrouter.route('/').post((req, res) => res.send());\nmodule.exports = router;\n",
    });
    for (const loop of ['defaultRoutes.forEach((route) => {\n  router.use(route.path, route.route);\n});', 'for (const { path, route } of defaultRoutes) router.use(path, route);']) {
      const inspection = await inspectProject(project(files(loop)));
      const endpoints = inspection.findings.flatMap((f) => (f.kind === 'endpoint' ? [`${f.method} ${f.path} ${f.prefixResolved}`] : []));
      expect(endpoints.sort()).toEqual(['POST /v1/auth/register true', 'POST /v1/users true']);
    }
  });

  it('reads a Server Action built by a validating wrapper, and a payment helper that redirects through next/navigation', async () => {
    // The shape of nextjs/saas-starter@e0dc5d4: `validatedAction(schema, fn)` actions, Stripe calls in a helper module
    // that imports `redirect` from next/navigation (a server function, not a hook).
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { next: '15.4.0', stripe: '^18.1.0', zod: '^3.24.4' } }),
      'lib/auth/middleware.ts': `import { z } from 'zod';
import { getUser } from '@/lib/db/queries';
export function validatedAction<S extends z.ZodTypeAny, T>(schema: S, action: (data: z.infer<S>, formData: FormData) => Promise<T>) {
  return async (_prev: unknown, formData: FormData) => {
    const result = schema.safeParse(Object.fromEntries(formData));
    return result.success ? action(result.data, formData) : { error: 'invalid' };
  };
}
export function validatedActionWithUser<S extends z.ZodTypeAny, T>(schema: S, action: (data: z.infer<S>, formData: FormData, user: { id: number }) => Promise<T>) {
  return async (_prev: unknown, formData: FormData) => {
    const user = await getUser();
    if (!user) throw new Error('User is not authenticated');
    const result = schema.safeParse(Object.fromEntries(formData));
    return result.success ? action(result.data, formData, user) : { error: 'invalid' };
  };
}
`,
      'lib/db/queries.ts': `import { cookies } from 'next/headers';
import { verifyToken } from '@/lib/auth/session';
export async function getUser() {
  const session = (await cookies()).get('session');
  return session ? ((await verifyToken(session.value)) as { id: number }) : null;
}
`,
      'lib/payments/stripe.ts': `import Stripe from 'stripe';
import { redirect } from 'next/navigation';
export const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export async function createCheckoutSession({ priceId }: { priceId: string }) {
  const session = await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: priceId, quantity: 1 }] });
  redirect(session.url!);
}
`,
      'app/(login)/actions.ts': `'use server';
import { z } from 'zod';
import { validatedAction, validatedActionWithUser } from '@/lib/auth/middleware';
import { createCheckoutSession } from '@/lib/payments/stripe';
const signUpSchema = z.object({ email: z.string().email(), password: z.string().min(8), inviteId: z.string().optional() });
export const signUp = validatedAction(signUpSchema, async (data, formData) => {
  const { email } = data;
  if (formData.get('redirect') === 'checkout') await createCheckoutSession({ priceId: String(formData.get('priceId')) });
  return { email };
});
export const invite = validatedActionWithUser(z.object({ email: z.string() }), async (data, _formData, user) => ({ email: data.email, by: user.id }));
`,
      'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@/*': ['./*'] } } }),
    });
    const { findings, routeAuthentication } = await inspectProject(dir);
    expect(findings.filter((f) => f.kind === 'payment').map((f) => [f.file, f.line])).toEqual([['lib/payments/stripe.ts', 5]]);
    // Built by a wrapper that reads the session through getUser(): authenticated; signUp: nothing reads one.
    expect(routeAuthentication?.map((r) => [r.path, r.by])).toEqual([
      ['/signUp', []],
      ['/invite', ['getUser() in validatedActionWithUser']],
    ]);
    const signUp = findings.find((f) => f.kind === 'endpoint' && f.handler === 'signUp');
    expect(signUp).toMatchObject({ transport: 'server-action', touchesPayment: true });
    expect(signUp?.kind === 'endpoint' ? [...(signUp.bodyFields ?? [])].sort() : []).toEqual(['email', 'inviteId', 'password', 'priceId', 'redirect']);
  });

  it('reads the database of a multi-file Prisma schema from the file that declares the datasource', async () => {
    // mfts/papermark@7ff2e65: prisma/schema/*.prisma, the datasource in schema.prisma, models in the others.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { '@prisma/client': '^6.0.0', next: '^14.0.0', ioredis: '^5.0.0' } }),
      'prisma/schema/annotation.prisma': 'model Annotation {\n  id String @id\n}\n',
      'prisma/schema/schema.prisma': 'generator client {\n  provider = "prisma-client-js"\n}\n\ndatasource db {\n  provider = "postgresql"\n  url = env("DATABASE_URL")\n}\n',
      'pages/api/hello.ts': 'export default function handler(req: any, res: any) { res.json({}); }\n',
    });
    const inspection = await inspectProject(dir);
    expect(inspection.stack.databases).toContain('postgres');
  });

  it('takes the methods of a Pages API route from the handler it hands the request to', async () => {
    // mfts/papermark@7ff2e65: `export default async function handle(req, res) { return handleRoute(req, res); }`.
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { next: '^14.0.0' } }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { paths: { '@/*': ['./*'] } } }),
      'pages/api/billing/cancel.ts': 'import { handleRoute } from "@/ee/cancel-route";\nexport default async function handle(req: any, res: any) {\n  return handleRoute(req, res);\n}\n',
      'ee/cancel-route.ts': 'export async function handleRoute(req: any, res: any) {\n  if (req.method === "POST") {\n    return res.status(200).json({ cancelled: true });\n  }\n  res.status(405).end();\n}\n',
      'pages/api/billing/invoices.ts': 'import handleRoute from "@/ee/invoices-route";\nexport default async function handle(req: any, res: any) {\n  return handleRoute(req, res);\n}\n',
      'ee/invoices-route.ts': 'export default async function handleRoute(req: any, res: any) {\n  if (req.method !== "GET") return res.status(405).end();\n  return res.json([]);\n}\n',
    });
    const endpoints = (await inspectProject(dir)).findings.filter((f) => f.kind === 'endpoint').map((f) => f.id);
    expect(endpoints).toContain('POST /api/billing/cancel');
    expect(endpoints.some((id) => id.endsWith('/api/billing/invoices'))).toBe(false);
  });

  it('names a NestJS BullMQ processor for the queue a constant of another file holds (nestjs-super@8e6b270)', async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { '@nestjs/common': '^11.0.0', '@nestjs/bullmq': '^11.0.0', bullmq: '^5.0.0' } }),
      'src/shared/constants/queue.constant.ts': "export const PAYMENT_QUEUE_NAME = 'payment'\nexport const CANCEL_PAYMENT_JOB_NAME = 'cancel-payment'\n",
      'src/queues/payment.consumer.ts': `import { Processor, WorkerHost } from '@nestjs/bullmq'
import { Job } from 'bullmq'
import { PAYMENT_QUEUE_NAME } from '../shared/constants/queue.constant'

@Processor(PAYMENT_QUEUE_NAME)
export class PaymentConsumer extends WorkerHost {
  async process(job: Job<{ paymentId: number }>): Promise<any> {
    return job.data.paymentId
  }
}
`,
    });
    const consumers = (await inspectProject(dir)).findings.filter((f) => f.kind === 'consumer');
    expect(consumers).toMatchObject([{ broker: 'bullmq', queue: 'payment', file: 'src/queues/payment.consumer.ts' }]);
  });

  it("counts the scaffold's consumer wrappers apply wired as dedupe, and a package's function of the same name as nothing", async () => {
    const dir = project({
      'package.json': JSON.stringify({ dependencies: { bullmq: '^5.0.0', '@nestjs/bullmq': '^11.0.0' } }),
      'src/worker.ts': `import { Worker } from 'bullmq'
import { bullmqProcessor } from './idempotency/consumers/bullmq.js'
export const worker = new Worker('receipts', bullmqProcessor({ core, action, handle: async (job) => send(job.data) }))
declare const core: any; declare const action: any; declare function send(d: unknown): Promise<void>
`,
      'src/payment.processor.ts': `import { Processor, WorkerHost } from '@nestjs/bullmq'
import { bullmqProcessor } from './idempotency/consumers/bullmq.js'

@Processor('payments')
export class PaymentProcessor extends WorkerHost {
  private readonly processOnce = bullmqProcessor({ core, action, handle: async (job: any) => cancel(job.data) })

  async process(job: any): Promise<any> {
    return this.processOnce(job)
  }
}
declare const core: any; declare const action: any; declare function cancel(d: unknown): Promise<void>
`,
      'src/other.ts': `import { Worker } from 'bullmq'
import { bullmqProcessor } from 'some-queue-kit'
export const other = new Worker('other', bullmqProcessor(async (job: any) => job))
`,
    });
    const consumers = (await inspectProject(dir)).findings.flatMap((f) => (f.kind === 'consumer' ? [[f.file, f.dedupes, f.dedupeEvidence?.detail ?? '-']] : []));
    expect(consumers).toEqual([
      ['src/other.ts', false, '-'],
      ['src/payment.processor.ts', true, 'the generated bullmqProcessor() claims each message id before the handler runs'],
      ['src/worker.ts', true, 'the generated bullmqProcessor() claims each message id before the handler runs'],
    ]);
  });
});
