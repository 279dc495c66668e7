import { actionNotWrapped } from '../../../src/findings/rules/action-not-wrapped.js';
import { consumerWithoutDedupe } from '../../../src/findings/rules/consumer-without-dedupe.js';
import { cronWithoutOverlapGuard } from '../../../src/findings/rules/cron-without-overlap-guard.js';
import { leaseShorterThanWorstCase } from '../../../src/findings/rules/lease-shorter-than-worst-case.js';
import { consumersAndCrons } from '../../../src/findings/localInspection.js';
import { describe, expect, it } from 'vitest';
import { configWith, contextFor, findingsFor, ruleTester } from '../ruleTester.js';

const consumer = (dedupes: boolean) => ({
  findings: [{ kind: 'consumer' as const, id: 'bullmq fulfilment', file: 'src/worker.ts', line: 2, broker: 'bullmq', queue: 'fulfilment', dedupes }],
});
const workerFile = { 'src/worker.ts': `import { Worker } from 'bullmq';\nnew Worker('fulfilment', async (job) => ship(job.data));\ndeclare function ship(d: unknown): Promise<void>;\n` };

/** A worker that "dedupes" with an upsert, and what audit's own inspection of it says. */
const upsertWorker = (where: string) => {
  const files = {
    'src/worker.ts': `import { Worker } from 'bullmq';
import { randomUUID } from 'node:crypto';
new Worker('fulfilment', async (job) => {
  await prisma.delivery.upsert({ where: ${where}, create: { id: randomUUID(), jobId: job.id }, update: {} });
  await ship(job.data);
});
declare const prisma: any; declare function ship(d: unknown): Promise<void>;
`,
  };
  return { files, inspection: consumersAndCrons(contextFor({ name: 'worker', files, dependencies: { bullmq: '^5.0.0' } }).sources, new Map()) };
};

ruleTester(consumerWithoutDedupe, {
  valid: [
    { name: 'consumer records the job id', files: workerFile, inspection: consumer(true) },
    { name: 'upsert keyed on the job id', ...upsertWorker('{ jobId: job.id }') },
  ],
  invalid: [
    { name: 'consumer applies every delivery', files: workerFile, inspection: consumer(false), errors: [{ line: 2, message: /bullmq consumer of fulfilment/ }] },
    {
      name: 'upsert keyed on a fresh id never meets the redelivered job',
      ...upsertWorker('{ id: randomUUID() }'),
      errors: [{ line: 3, message: /applies messages without recording their id: a redelivery runs it twice\. The upsert at src\/worker\.ts:4 is keyed on `randomUUID\(\)`, made fresh per delivery, so a redelivery inserts again\.$/ }],
    },
  ],
});

const cron = { findings: [{ kind: 'cron' as const, id: 'node-cron settle', file: 'src/jobs.ts', line: 2, scheduler: 'node-cron', schedule: '*/5 * * * *', name: 'settle' }] };
ruleTester(cronWithoutOverlapGuard, {
  valid: [
    {
      name: 'run claims an advisory lock',
      files: { 'src/jobs.ts': `import cron from 'node-cron';\ncron.schedule('*/5 * * * *', async () => {\n  const { rows } = await pool.query('SELECT pg_try_advisory_lock(42) AS ok');\n  if (rows[0].ok) await settle();\n});\ndeclare const pool: any; declare function settle(): Promise<void>;\n` },
      inspection: cron,
    },
    {
      name: 'vercel cron whose route takes a lock',
      files: { 'vercel.json': '{ "crons": [{ "path": "/api/cron/settle", "schedule": "0 3 * * *" }] }', 'app/api/cron/settle/route.ts': `export async function GET() {\n  await redis.set('cron:settle', '1', { nx: true, px: 600000 });\n}\ndeclare const redis: any;\n` },
      inspection: { findings: [{ kind: 'cron', id: 'vercel /api/cron/settle', file: 'vercel.json', line: 1, scheduler: 'vercel', name: '/api/cron/settle', schedule: '0 3 * * *' }] },
    },
    {
      name: "the job apply wired through the scaffold's CronGuard",
      files: { 'src/jobs.ts': `import cron from 'node-cron';
import { CronGuard, nodeCronTask } from './idempotency/cron/guard.js';
const cronGuard = new CronGuard({ core });
cron.schedule('*/5 * * * *', nodeCronTask(cronGuard, ACTIONS.settle, 'settle', 300_000, async () => settle()));
declare const core: any; declare const ACTIONS: any; declare function settle(): Promise<void>;
` },
      inspection: cron,
    },
  ],
  invalid: [
    {
      name: 'two instances both run the slot',
      files: { 'src/jobs.ts': `import cron from 'node-cron';\ncron.schedule('*/5 * * * *', () => settle());\ndeclare function settle(): Promise<void>;\n` },
      inspection: cron,
      errors: [{ line: 2, message: /node-cron job settle \(\*\/5/ }],
    },
  ],
});

const payAction = { name: 'createPayment', trigger: 'http', route: 'POST /payments', significantFields: ['amount'], provider: 'stripe', source: 'src/routes/payments.ts:4' };
const paymentsRoute = (wrapped: boolean) => `import { Router } from 'express';
${wrapped ? "import { idempotency } from '../idempotency/index.js';\n" : ''}export const router = Router();
router.post('/payments', ${wrapped ? 'idempotency.middleware.createPayment, ' : ''}async (req, res) => res.json(await charge(req.body)));
declare function charge(b: unknown): Promise<unknown>;
`;

ruleTester(actionNotWrapped, {
  valid: [
    { name: 'route mounts the generated middleware', files: { 'src/routes/payments.ts': paymentsRoute(true) }, config: configWith([payAction], { scaffold: { dir: 'src/idempotency' } }) },
    { name: 'no scaffold: nothing to wrap with', files: { 'src/routes/payments.ts': paymentsRoute(false) }, config: configWith([payAction]) },
    { name: 'handler not in the project: nothing to judge', files: { 'src/other.ts': 'export const x = 1;\n' }, config: configWith([payAction], { scaffold: { dir: 'src/idempotency' } }) },
  ],
  invalid: [
    {
      name: 'generated layer never mounted',
      files: { 'src/routes/payments.ts': paymentsRoute(false) },
      config: configWith([payAction], { scaffold: { dir: 'src/idempotency' } }),
      errors: [{ line: 4, message: /createPayment \(POST \/payments\) is configured but no file imports/ }],
    },
  ],
});

describe('action-not-wrapped on a routing-controllers controller', () => {
  it('tells to claim the key inside the method, not to mount middleware that would run before body parsing and auth', () => {
    const controller = `import { Body, JsonController, Post } from 'routing-controllers';
@JsonController('/payments')
export class PaymentController {
  @Post()
  public create(@Body() body: { amount: number }) { return body; }
}
`;
    const [finding, ...rest] = findingsFor(actionNotWrapped, { name: 'rc', files: { 'src/routes/payments.ts': controller }, config: configWith([payAction], { scaffold: { dir: 'src/idempotency' } }) });
    expect(rest).toEqual([]);
    expect(finding?.fix).toMatch(/^Claim the key inside the controller method: routing-controllers runs `@UseBefore` middleware before its body parser/);
    expect(finding?.fix).not.toContain('router.post');
  });

  it('a GraphQL resolver: claim the key inside it, with the key through the GraphQL context', () => {
    const resolver = `import { Args, Mutation, Resolver } from '@nestjs/graphql';
@Resolver()
export class PaymentResolver {
  @Mutation(() => String)
  createPayment(@Args('amount') amount: number) { return String(amount); }
}
`;
    const [finding] = findingsFor(actionNotWrapped, { name: 'gql', files: { 'src/routes/payments.ts': resolver }, config: configWith([payAction], { scaffold: { dir: 'src/idempotency' } }) });
    expect(finding?.fix).toMatch(/^Claim the key inside the resolver: a mutation arrives at the one GraphQL endpoint/);
    // A config that says it is a mutation names it so, not as a route no request goes to.
    const mutation = { ...payAction, route: 'POST /createPayment', transport: 'graphql' };
    const [named] = findingsFor(actionNotWrapped, { name: 'gql', files: { 'src/routes/payments.ts': resolver }, config: configWith([mutation], { scaffold: { dir: 'src/idempotency' } }) });
    expect(named?.message).toMatch(/^Action createPayment \(GraphQL mutation createPayment\) is configured/);
    expect(named?.message).not.toContain('POST');
  });

  it('a resolver map on the plain wrapper (unknown framework, only mutations): run its body inside it, and once wrapped it is wired', () => {
    const resolvers = (wrapped: boolean) => `${wrapped ? "import { idempotency } from '../idempotency/instance.js';\n" : ''}export const resolvers = {
  Mutation: {
    createPayment: async (_parent: unknown, args: { amount: number }, context: { request: Request }) => {
      ${wrapped ? "return idempotency.createPayment({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => String(args.amount));" : 'return String(args.amount);'}
    },
  },
};
`;
    const mutation = { ...payAction, route: 'POST /createPayment', transport: 'graphql', source: 'src/graphql/resolvers.ts:3' };
    const plain = (wrapped: boolean) => findingsFor(actionNotWrapped, { name: 'plaingql', files: { 'src/graphql/resolvers.ts': resolvers(wrapped) }, config: configWith([mutation], { stack: { language: 'typescript', framework: 'unknown', database: 'postgres' }, scaffold: { dir: 'src/idempotency' } }) });
    const [finding, ...rest] = plain(false);
    expect(rest).toEqual([]);
    expect(finding?.fix).toMatch(/^Run the resolver's body inside the plain wrapper: `return idempotency\.createPayment\(\{ key: <the Idempotency-Key header/);
    expect(plain(true)).toEqual([]);
  });

  it('a NestJS resolver in a project on the Nest adapter: mark it with @Idempotent, and once marked it is wrapped', () => {
    const resolver = (marked: boolean) => `import { Args, Mutation, Resolver } from '@nestjs/graphql';
${marked ? "import { ACTIONS, Idempotent } from '../idempotency/index.js';\n" : ''}@Resolver()
export class PaymentResolver {
  @Mutation(() => String)${marked ? '\n  @Idempotent(ACTIONS.createPayment)' : ''}
  createPayment(@Args('amount') amount: number) { return String(amount); }
}
`;
    const nest = (marked: boolean) => findingsFor(actionNotWrapped, { name: 'nestgql', files: { 'src/routes/payments.ts': resolver(marked) }, config: configWith([payAction], { stack: { language: 'typescript', framework: 'nestjs', database: 'postgres' }, scaffold: { dir: 'src/idempotency' } }) });
    const [finding, ...rest] = nest(false);
    expect(rest).toEqual([]);
    expect(finding?.fix).toMatch(/^Mark the resolver method with `@Idempotent\(ACTIONS\.createPayment\)` under its `@Mutation\(\)`/);
    expect(nest(true)).toEqual([]);
  });
});

const stripeRoute = (client: string, extra = '') => `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!${client});
${extra}export async function POST(req: Request) {
  const body = await req.json();
  return Response.json(await stripe.paymentIntents.create({ amount: 1000, currency: 'eur' }, { idempotencyKey: body.key }));
}
`;
const routeAction = { ...payAction, source: 'app/api/pay/route.ts:4' };

ruleTester(leaseShorterThanWorstCase, {
  valid: [
    { name: 'client bounded to fit the lease', files: { 'app/api/pay/route.ts': stripeRoute(', { timeout: 3_000, maxNetworkRetries: 1 }') }, config: configWith([routeAction]) },
    { name: 'long expected duration switches to a renewed lease', files: { 'app/api/pay/route.ts': stripeRoute('') }, config: configWith([{ ...routeAction, expectedDurationMs: 30_000 }]) },
  ],
  invalid: [
    {
      name: 'SDK defaults outlive the lease',
      files: { 'app/api/pay/route.ts': stripeRoute('') },
      config: configWith([routeAction]),
      dependencies: { stripe: '^17.4.0' },
      errors: [{ line: 4, message: /createPayment would get a lease of \d+ seconds from its assumed duration, but its Stripe call may run 160 seconds: Stripe: 80 seconds time-out × 2 attempts.*renews a lease of 33 seconds every 10 seconds/ }],
    },
    {
      name: 'platform limit caps the worst case but still exceeds the lease',
      files: { 'app/api/pay/route.ts': stripeRoute('', 'export const maxDuration = 60;\n') },
      config: configWith([{ ...routeAction, source: 'app/api/pay/route.ts:5' }]),
      errors: [{ line: 5, message: /may run 1 minute.*capped by maxDuration = 60 in the route/ }],
    },
  ],
});
