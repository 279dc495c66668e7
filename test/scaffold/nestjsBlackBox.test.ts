import { rm } from 'node:fs/promises';
import net from 'node:net';
import 'reflect-metadata';
import {
  Body,
  Controller,
  HttpException,
  Module,
  Post,
  Req,
  Res,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`NestJS black-box tests against PostgreSQL skipped: ${skip}`);

const NEST_COMPILER_OPTIONS = { experimentalDecorators: true, emitDecoratorMetadata: true };
type Counters = { orders: number };
type ClaimSeen = { key: string } | undefined;

/**
 * What the handler's probe saw for a request sent with `x-probe`: the claim read with no request from an injected
 * service's await chain (idempotencyOf()), the one read from the request, and a continuation the handler left pending
 * that reads idempotencyOf() again only after the test has its answer.
 */
interface Probes {
  seen: Array<{ key: string; ambient: ClaimSeen; own: ClaimSeen }>;
  late: Array<Promise<ClaimSeen>>;
  /** Resolves once every probed request is inside its claim, so they overlap by construction, not by timing. */
  arrive: () => Promise<void>;
  answered: Promise<void>;
}

/** A barrier for `parties` callers, and what lets the probes' pending continuations run. */
function probesFor(parties: number): Probes & { answer: () => void } {
  let arrived = 0;
  let open!: () => void;
  let answer!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  const answered = new Promise<void>((resolve) => (answer = resolve));
  return {
    seen: [],
    late: [],
    answered,
    answer,
    arrive: () => {
      arrived += 1;
      if (arrived === parties) open();
      return all;
    },
  };
}
type OrderBody = { cartId: string; items: Array<{ sku: string; quantity: number }>; shippingAddressId: string };

/** This repository compiles without experimentalDecorators, so the app applies Nest's decorators as the compiler would. */
function decorateMethod(target: object, name: string, ...decorators: Array<MethodDecorator | ParameterDecorator>): void {
  const descriptor = Object.getOwnPropertyDescriptor(target, name)!;
  for (const decorator of decorators.reverse()) (decorator as MethodDecorator)(target, name, descriptor);
  Object.defineProperty(target, name, descriptor);
}

/**
 * A NestJS app on the generated interceptor for the marketplace design: a guard stands in for auth and a throttler
 * (it refuses before the interceptor), the order handler is slow enough for duplicates to overlap, declines with a
 * 402 HttpException and fails with a plain Error on demand.
 */
async function buildApp(scaffold: Loose, pool: pg.Pool, counters: Counters, probes: { current?: Probes } = {}): Promise<INestApplication> {
  const idempotency = scaffold.createIdempotency({ pool, principal: (request: Request & { user?: { id?: string } }) => request.user?.id });

  class AccountGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      const request = context.switchToHttp().getRequest<Request & { user?: { id: string } }>();
      const refusal = Number(request.headers['x-refuse']);
      if (refusal === 403) return false; // Nest answers 403 Forbidden
      if (refusal === 401) throw new UnauthorizedException();
      if (refusal) throw new HttpException('Too Many Requests', refusal);
      const account = request.headers['x-account'];
      if (typeof account === 'string') request.user = { id: account };
      return true;
    }
  }

  /** An injected service's view: no request, only the async call chain it runs in. */
  const paymentsService = {
    async currentClaim(): Promise<ClaimSeen> {
      await Promise.resolve();
      return scaffold.idempotencyOf() as ClaimSeen;
    },
  };

  async function probe(request: Request, current: Probes): Promise<void> {
    await current.arrive();
    const ambient = await paymentsService.currentClaim();
    current.seen.push({ key: String(request.headers['idempotency-key']), ambient, own: scaffold.idempotencyOf(request) as ClaimSeen });
    current.late.push(current.answered.then(() => scaffold.idempotencyOf() as ClaimSeen));
  }

  class OrdersController {
    async submitOrder(request: Request, res: Response, body: OrderBody) {
      counters.orders += 1;
      if (request.headers['x-probe'] && probes.current) await probe(request, probes.current);
      await new Promise((resolve) => setTimeout(resolve, 150)); // every duplicate arrives while this one runs
      if (request.headers['x-fail']) throw new Error('Adyen timed out');
      if (body.cartId === 'cart-declined') throw new HttpException({ error: 'card declined', attempt: counters.orders }, 402);
      res.location(`/api/v1/orders/ord_${counters.orders}`);
      return { orderId: `ord_${counters.orders}`, cartId: body.cartId };
    }
  }
  const proto = OrdersController.prototype;
  decorateMethod(proto, 'submitOrder', Post('orders'), scaffold.Idempotent(scaffold.ACTIONS.submitOrder));
  (Req() as ParameterDecorator)(proto, 'submitOrder', 0);
  (Res({ passthrough: true }) as ParameterDecorator)(proto, 'submitOrder', 1);
  (Body() as ParameterDecorator)(proto, 'submitOrder', 2);
  Controller('api/v1')(OrdersController);
  UseGuards(AccountGuard)(OrdersController);

  class AppModule {}
  Module({ controllers: [OrdersController], providers: scaffold.idempotencyProviders(idempotency) })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

const urlOf = (app: INestApplication) => `http://127.0.0.1:${(app.getHttpServer().address() as net.AddressInfo).port}`;

describe.skipIf(skip !== undefined)('NestJS app on the generated interceptor, against PostgreSQL', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Loose;
  let app: INestApplication;
  let url = '';
  const counters: Counters = { orders: 0 };
  const probes: { current?: Probes } = {};

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('nestjs-adyen-saga'), 'nestjs-blackbox', NEST_COMPILER_OPTIONS);
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'nestjs');
    scaffold = await loadScaffold(generated);
    app = await buildApp(scaffold, schema.pool, counters, probes);
    url = urlOf(app);
  });

  afterAll(async () => {
    await app?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const order = (key: string | undefined, options: { account?: string; cartId?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-account': options.account ?? 'acct_1', ...options.headers };
    if (key !== undefined) headers['idempotency-key'] = key;
    const body = { cartId: options.cartId ?? 'cart-12', items: [{ sku: 'SKU-1', quantity: 2 }], shippingAddressId: 'addr-9', note: 'not significant' };
    return fetch(`${url}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify(body) });
  };
  const runs = async <T>(work: () => Promise<T>) => {
    const before = counters.orders;
    const result = await work();
    return { result, ran: counters.orders - before };
  };

  it('50 concurrent requests with one key: the action runs once, the rest get 409 + Retry-After or the replay, none a 5xx', async () => {
    const { result: responses, ran } = await runs(() => Promise.all(Array.from({ length: 50 }, () => order('"9d1f-concurrent"'))));
    expect(ran).toBe(1);
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const bodies = await Promise.all(responses.filter((r) => r.status === 201).map((r) => r.text()));
    expect(new Set(bodies).size).toBe(1);

    // The structured-field form and the bare form name the same key: the replay has the recorded bytes and headers.
    const { result: replay, ran: again } = await runs(() => order('9d1f-concurrent'));
    expect(again).toBe(0);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(`/api/v1/orders/ord_${counters.orders}`);
    expect(replay.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await replay.text()).toBe(bodies[0]);
    const { rows } = await schema.pool.query("SELECT status, response_status FROM idempotency_store WHERE key = '9d1f-concurrent'");
    expect(rows).toEqual([{ status: 'COMPLETED', response_status: 201 }]);
  });

  it('a service the handler calls reads its own request\u2019s claim with idempotencyOf(), under two overlapping requests, and nothing once the claim ended', async () => {
    const current = probesFor(2);
    probes.current = current;
    expect(scaffold.idempotencyOf()).toBeUndefined();
    const [first, second] = await Promise.all([order('key-probe-a', { headers: { 'x-probe': '1' } }), order('key-probe-b', { account: 'acct_2', headers: { 'x-probe': '1' } })]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(current.seen.map((s) => s.key).sort()).toEqual(['key-probe-a', 'key-probe-b']);
    for (const { key, ambient, own } of current.seen) {
      expect(ambient?.key).toBe(key);
      expect(ambient).toBe(own);
    }
    // What the handlers left pending runs after their claims ended: it sees no claim, nor the other request's.
    current.answer();
    expect(await Promise.all(current.late)).toEqual([undefined, undefined]);
    expect(scaffold.idempotencyOf()).toBeUndefined();
    delete probes.current;
  });

  it('the first answer carries the same headers the replay will: what was recorded is what was sent', async () => {
    const first = await order('key-headers');
    const replay = await order('key-headers');
    for (const name of ['content-type', 'location', 'etag']) expect(replay.headers.get(name), name).toBe(first.headers.get(name));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await replay.text()).toBe(await first.text());
  });

  it('rejects missing, empty, over-long, control-character and malformed structured keys with 400 problem+json', async () => {
    const { ran } = await runs(async () => {
      for (const key of [undefined, '', '""', 'a'.repeat(256), 'bad\tkey', '"un"quoted"']) {
        const response = await order(key);
        expect(response.status, JSON.stringify(key)).toBe(400);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
    });
    expect(ran).toBe(0);
  });

  it('same key with a different request: 422 problem+json that never carries the stored body', async () => {
    expect((await order('key-mismatch')).status).toBe(201);
    const { result: second, ran } = await runs(() => order('key-mismatch', { cartId: 'cart-99' }));
    expect(ran).toBe(0);
    expect(second.status).toBe(422);
    expect(second.headers.get('content-type')).toContain('application/problem+json');
    const text = await second.text();
    expect(text).not.toContain('ord_');
    expect(JSON.parse(text).type).toMatch(/key-mismatch$/);
  });

  it('a definitive 4xx HttpException (402) is stored and replayed; a plain Error (500) releases the key so a retry runs again', async () => {
    const declined = await order('key-declined', { cartId: 'cart-declined' });
    expect(declined.status).toBe(402);
    const recorded = await schema.pool.query("SELECT status, response_status FROM idempotency_store WHERE key = 'key-declined'");
    expect(recorded.rows).toEqual([{ status: 'FAILED', response_status: 402 }]);
    const declinedBody = await declined.text();
    expect(JSON.parse(declinedBody)).toEqual({ error: 'card declined', attempt: counters.orders });
    const { result: replay, ran } = await runs(() => order('key-declined', { cartId: 'cart-declined' }));
    expect(ran).toBe(0);
    expect(replay.status).toBe(402);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(declinedBody);

    const failed = await runs(() => order('key-failing', { headers: { 'x-fail': '1' } }));
    expect(failed.result.status).toBe(500);
    expect(failed.ran).toBe(1);
    const retry = await runs(() => order('key-failing'));
    expect(retry.result.status).toBe(201);
    expect(retry.ran).toBe(1);
  });

  it('401/403/429 from a guard are never stored: the same key then runs normally', async () => {
    for (const status of [401, 403, 429]) {
      const refused = await runs(() => order(`key-refused-${status}`, { headers: { 'x-refuse': String(status) } }));
      expect(refused.result.status).toBe(status);
      expect(refused.ran).toBe(0);
      const { rows } = await schema.pool.query('SELECT 1 FROM idempotency_store WHERE key = $1', [`key-refused-${status}`]);
      expect(rows).toEqual([]);
      const accepted = await runs(() => order(`key-refused-${status}`));
      expect(accepted.result.status).toBe(201);
      expect(accepted.result.headers.get('idempotent-replayed')).toBeNull();
      expect(accepted.ran).toBe(1);
    }
    // No principal on request.user: 401 from the interceptor itself, nothing claimed.
    const anonymous = await fetch(`${url}/api/v1/orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'key-anon' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expect((await schema.pool.query("SELECT 1 FROM idempotency_store WHERE key = 'key-anon'")).rows).toEqual([]);
  });

  it("records are scoped to (principal, key): another account's identical key runs as its own and never sees the first", async () => {
    const mine = await (await order('key-shared', { account: 'acct_1' })).text();
    const { result: theirs, ran } = await runs(() => order('key-shared', { account: 'acct_2', cartId: 'cart-77' }));
    expect(ran).toBe(1);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await theirs.text()).not.toBe(mine);
    const { rows } = await schema.pool.query("SELECT scope FROM idempotency_store WHERE key = 'key-shared' ORDER BY scope");
    expect(rows).toEqual([{ scope: 'acct_1' }, { scope: 'acct_2' }]);
  });

  it('the BullMQ consumer (capturePayment) runs once per derived key through core.runOnce', async () => {
    const job = { orderId: 'ord_7', pspReference: 'PSP99', amount: { value: 1299, currency: 'EUR' } };
    const action = scaffold.ACTIONS.capturePayment;
    const request = {
      scope: 'global',
      key: scaffold.deriveKey(action.codeName, scaffold.pickFields(action.key.from, { body: job })),
      fingerprint: scaffold.computeFingerprint({ method: 'CONSUME', route: action.route, fields: scaffold.pickFields(action.significantFields, { body: job }) }),
    };
    let captures = 0;
    const capture = async () => ({ captured: ++captures });
    const first = await idempotencyCore().runOnce(action, request, capture);
    const redelivered = await idempotencyCore().runOnce(action, request, capture);
    expect(captures).toBe(1);
    expect(first).toEqual({ result: { captured: 1 }, replayed: false });
    expect(redelivered).toEqual({ result: { captured: 1 }, replayed: true });
  });

  const idempotencyCore = () => scaffold.createIdempotency({ pool: schema.pool, principal: () => undefined }).core;
});

/**
 * The store stops answering: a TCP port that accepts connections and never replies (a partition or a hung server),
 * worse than a refused connection because nothing errors on its own. Needs no database, so it never skips.
 */
describe('NestJS app while PostgreSQL is unreachable', () => {
  let generated: Generated;
  let scaffold: Loose;
  let blackHole: net.Server;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('nestjs-adyen-saga'), 'nestjs-outage', NEST_COMPILER_OPTIONS);
    expect(generated.tscOutput).toBe('');
    scaffold = await loadScaffold(generated);
    blackHole = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackHole?.close(resolve));
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  it('answers 503 + Retry-After within the configured time-out and never runs the action', async () => {
    const timeoutMs: number = scaffold.POLICY.storeTimeoutMs;
    const pool: pg.Pool = scaffold.createPool(`postgres://postgres@127.0.0.1:${(blackHole.address() as net.AddressInfo).port}/test`, timeoutMs);
    const counters: Counters = { orders: 0 };
    const app = await buildApp(scaffold, pool, counters);
    try {
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          fetch(`${urlOf(app)}/api/v1/orders`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `outage-${i}`, 'x-account': 'acct_1' },
            body: JSON.stringify({ cartId: 'cart-12', items: [{ sku: 'SKU-1', quantity: 2 }], shippingAddressId: 'addr-9' }),
            signal: AbortSignal.timeout(timeoutMs * 4),
          }),
        ),
      );
      const elapsed = performance.now() - started;
      for (const response of responses) {
        expect(response.status).toBe(503);
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
      expect(elapsed).toBeLessThan(timeoutMs + 1_000);
      expect(counters.orders).toBe(0);
    } finally {
      await app.close();
      void pool.end().catch(() => undefined);
    }
  });
});
