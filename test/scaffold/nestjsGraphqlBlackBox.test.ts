import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type net from 'node:net';
import path from 'node:path';
import 'reflect-metadata';
import { HttpException, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type pg from 'pg';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';
import { installNestGraphql, NEST_GRAPHQL_CACHE } from './nestGraphqlPackages.js';

/**
 * A NestJS GraphQL app (Apollo driver on the Express platform) on the generated interceptor: a resolver method
 * marked @Idempotent(ACTIONS.placeOrder) like a controller route. The scaffold itself compiles without
 * @nestjs/graphql installed (generateAndCompile runs in this repository, which has none).
 */
const postgresSkip = await postgresSkipReason();
const installSkip = postgresSkip ? undefined : await installNestGraphql();
const skip = postgresSkip ?? installSkip;
if (skip) console.warn(`NestJS GraphQL black-box tests skipped: ${skip}`);

const NEST_COMPILER_OPTIONS = { experimentalDecorators: true, emitDecoratorMetadata: true };

const TYPE_DEFS = `
type Order { orderId: String!, sku: String!, quantity: Int!, attempt: Int! }
type Query { ping: String }
type Mutation { placeOrder(sku: String!, quantity: Int!, note: String): Order! }
`;

interface Gate {
  /** Resolves when the resolver started; the resolver then waits for open(). */
  entered: Promise<void>;
  open(): void;
}
type Counters = { orders: number; gate?: Gate };

function gate(): Gate & { enter(): Promise<void> } {
  let entered!: () => void;
  let open!: () => void;
  const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    entered: enteredPromise,
    open,
    enter: () => {
      entered();
      return opened;
    },
  };
}

/** This repository compiles without experimentalDecorators, so the app applies the decorators as the compiler would. */
function decorateMethod(target: object, name: string, ...decorators: MethodDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(target, name)!;
  for (const decorator of decorators.reverse()) decorator(target, name, descriptor);
  Object.defineProperty(target, name, descriptor);
}

async function buildApp(scaffold: Loose, pool: pg.Pool, counters: Counters): Promise<INestApplication> {
  const load = createRequire(path.join(NEST_GRAPHQL_CACHE, 'package.json'));
  const gql = load('@nestjs/graphql') as Loose;
  const { ApolloDriver } = load('@nestjs/apollo') as Loose;
  // The caller's account, as an auth guard would leave it: here straight from a header.
  const idempotency = scaffold.createIdempotency({ pool, principal: (request: { headers: Record<string, string | undefined> }) => request.headers['x-account'] });

  class OrdersResolver {
    async placeOrder(args: { sku: string; quantity: number }) {
      counters.orders += 1;
      const attempt = counters.orders;
      const held = counters.gate as (Gate & { enter(): Promise<void> }) | undefined;
      if (held) await held.enter();
      if (args.sku === 'declined') throw new HttpException({ statusCode: 402, message: 'card declined', attempt }, 402);
      if (args.sku === 'failing') throw new Error('warehouse timed out');
      return { orderId: `ord_${attempt}`, sku: args.sku, quantity: args.quantity, attempt };
    }
  }
  const proto = OrdersResolver.prototype;
  decorateMethod(proto, 'placeOrder', gql.Mutation(), scaffold.Idempotent(scaffold.ACTIONS.placeOrder));
  (gql.Args() as ParameterDecorator)(proto, 'placeOrder', 0);
  gql.Resolver()(OrdersResolver);

  class AppModule {}
  Module({
    imports: [gql.GraphQLModule.forRoot({ driver: ApolloDriver, typeDefs: TYPE_DEFS })],
    providers: [OrdersResolver, ...scaffold.idempotencyProviders(idempotency)],
  })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

interface GraphqlError {
  message: string;
  extensions: { code?: string; status?: number; originalError?: Record<string, unknown> };
}
interface GraphqlAnswer {
  data: { placeOrder: { orderId: string; sku: string; quantity: number; attempt: number } | null } | null;
  errors?: GraphqlError[];
}

describe.skipIf(skip !== undefined)('NestJS GraphQL mutation (Apollo, Express) on the generated interceptor, against PostgreSQL', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Loose;
  let app: INestApplication;
  let url = '';
  const counters: Counters = { orders: 0 };

  beforeAll(async () => {
    const model = await modelFor('nestjs-adyen-saga', (raw) => {
      (raw.actions as unknown[]).push({ name: 'placeOrder', trigger: 'http', route: 'POST /placeOrder', significantFields: ['sku', 'quantity'], scope: 'account', source: 'src/orders/orders.resolver.ts:12' });
    });
    generated = await generateAndCompile(model, 'nestjs-graphql', NEST_COMPILER_OPTIONS);
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'nestgql');
    scaffold = await loadScaffold(generated);
    app = await buildApp(scaffold, schema.pool, counters);
    url = `http://127.0.0.1:${(app.getHttpServer().address() as net.AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    await app?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const placeOrder = async (key: string | undefined, variables: { sku?: string; quantity?: number; note?: string } = {}, account = 'acct_1'): Promise<GraphqlAnswer> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-account': account };
    if (key !== undefined) headers['idempotency-key'] = key;
    const query = 'mutation Place($sku: String!, $quantity: Int!, $note: String) { placeOrder(sku: $sku, quantity: $quantity, note: $note) { orderId sku quantity attempt } }';
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables: { sku: 'SKU-1', quantity: 2, ...variables } }) });
    return (await response.json()) as GraphqlAnswer;
  };
  const runs = async <T>(work: () => Promise<T>) => {
    const before = counters.orders;
    const result = await work();
    return { result, ran: counters.orders - before };
  };
  const stored = async (key: string) => (await schema.pool.query('SELECT status, response_status FROM idempotency_store WHERE key = $1', [key])).rows as unknown[];

  it('the same mutation twice with one key: it runs once, the second call gets the recorded result', async () => {
    const { result: first, ran } = await runs(() => placeOrder('gql-twice', { note: 'first' }));
    expect(ran).toBe(1);
    expect(first.errors).toBeUndefined();
    expect(first.data?.placeOrder).toEqual({ orderId: `ord_${counters.orders}`, sku: 'SKU-1', quantity: 2, attempt: counters.orders });
    // `note` is not a significant field: a retry that changes it is the same request.
    const { result: second, ran: again } = await runs(() => placeOrder('gql-twice', { note: 'retried' }));
    expect(again).toBe(0);
    expect(second).toEqual(first);
    expect(await stored('gql-twice')).toEqual([{ status: 'COMPLETED', response_status: 200 }]);
  });

  it('concurrent calls with one key: one runs, every other gets the in-flight error (409), then the key replays', async () => {
    const held = gate();
    counters.gate = held;
    const before = counters.orders;
    let answered = 0;
    // The first call to claim the key waits inside the resolver until every other call has been answered.
    const calls = Array.from({ length: 6 }, () =>
      placeOrder('gql-concurrent').then((answer) => {
        answered += 1;
        if (answered === 5) held.open();
        return answer;
      }),
    );
    const answers = await Promise.all(calls);
    counters.gate = undefined;
    expect(counters.orders - before).toBe(1);
    const executed = answers.filter((answer) => answer.data?.placeOrder);
    const refused = answers.filter((answer) => answer.errors);
    expect(executed).toHaveLength(1);
    expect(refused).toHaveLength(5);
    for (const answer of refused) {
      expect(answer.data).toBeNull();
      expect(answer.errors![0]!.extensions.status).toBe(409);
      expect(answer.errors![0]!.extensions.originalError).toMatchObject({ status: 409, title: 'Request in progress' });
      expect(Number(answer.errors![0]!.extensions.originalError!.retryAfterSeconds)).toBeGreaterThan(0);
      expect(String(answer.errors![0]!.extensions.originalError!.type)).toMatch(/in-flight$/);
    }
    const { result: replay, ran } = await runs(() => placeOrder('gql-concurrent'));
    expect(ran).toBe(0);
    expect(replay).toEqual(executed[0]);
  });

  it('the same key with other arguments: a key-mismatch error with 422 in its extensions, and the mutation does not run', async () => {
    expect((await placeOrder('gql-mismatch')).errors).toBeUndefined();
    const { result: second, ran } = await runs(() => placeOrder('gql-mismatch', { quantity: 3 }));
    expect(ran).toBe(0);
    expect(second.data).toBeNull();
    const error = second.errors![0]!;
    // Apollo names 422 BAD_USER_INPUT; the problem with its status is extensions.originalError.
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(error.extensions.originalError).toMatchObject({ statusCode: 422, status: 422, title: 'Idempotency-Key reused' });
    expect(String(error.extensions.originalError!.type)).toMatch(/key-mismatch$/);
    expect(JSON.stringify(second)).not.toContain('ord_');
  });

  it('without a key, or without a caller: 400 / 401 GraphQL errors, nothing claimed, nothing run', async () => {
    const { result: keyless, ran } = await runs(() => placeOrder(undefined));
    expect(ran).toBe(0);
    expect(keyless.errors![0]!.extensions).toMatchObject({ code: 'BAD_REQUEST', originalError: { status: 400 } });
    const { result: anonymous, ran: anonymousRan } = await runs(() => placeOrder('gql-anonymous', {}, ''));
    expect(anonymousRan).toBe(0);
    expect(anonymous.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', originalError: { status: 401 } });
    expect(await stored('gql-anonymous')).toEqual([]);
  });

  it('reads the request where other drivers put it (GraphQL Yoga: ctx.request with Fetch Headers), and never runs without one', async () => {
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (request: { headers: Headers }) => request.headers.get('x-account') ?? undefined });
    let executions = 0;
    const resolver = { handle: () => from([{ orderId: `ord_yoga_${++executions}` }]) };
    const call = (ctx: unknown, args: unknown) => {
      const context = { getType: () => 'graphql', getArgs: () => [undefined, args, ctx, {}] };
      return lastValueFrom(idempotency.placeOrder.intercept(context, resolver) as Observable<unknown>);
    };
    const yoga = { request: new Request('http://localhost/graphql', { method: 'POST', headers: { 'idempotency-key': 'gql-yoga', 'x-account': 'acct_1' } }) };
    const first = await call(yoga, { sku: 'SKU-1', quantity: 1 });
    expect(first).toEqual({ orderId: 'ord_yoga_1' });
    expect(await call(yoga, { sku: 'SKU-1', quantity: 1 })).toEqual(first);
    expect(executions).toBe(1);
    await expect(call({ user: 'no request here' }, { sku: 'SKU-1', quantity: 1 })).rejects.toThrow(/needs the HTTP request in the GraphQL context/);
    expect(executions).toBe(1);
  });

  it('a 4xx HttpException from the resolver is the recorded outcome and comes back on a retry; a plain Error releases the key', async () => {
    const { result: declined, ran } = await runs(() => placeOrder('gql-declined', { sku: 'declined' }));
    expect(ran).toBe(1);
    expect(declined.errors![0]!.extensions).toMatchObject({ status: 402, originalError: { statusCode: 402, message: 'card declined' } });
    expect(await stored('gql-declined')).toEqual([{ status: 'FAILED', response_status: 402 }]);
    const { result: replay, ran: again } = await runs(() => placeOrder('gql-declined', { sku: 'declined' }));
    expect(again).toBe(0);
    expect(replay).toEqual(declined);

    const failed = await runs(() => placeOrder('gql-failing', { sku: 'failing' }));
    expect(failed.ran).toBe(1);
    expect(failed.result.errors![0]!.message).toBe('warehouse timed out');
    expect(await stored('gql-failing')).toEqual([]);
    const retried = await runs(() => placeOrder('gql-failing', { sku: 'failing' }));
    expect(retried.ran).toBe(1);
  });
});
