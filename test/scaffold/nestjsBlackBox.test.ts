import type net from 'node:net';
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
import { expect, it } from 'vitest';
import { describeBlackBox, overHttp, type BlackBoxDesign, type Counters, type StartApp, type Suite } from './adapterBlackBox.js';
import type { Loose } from './harness.js';

/** The marketplace design: Adyen, a saga, 422 on mismatch, the account as principal; Nest's decorators compiled. */
const MARKETPLACE: BlackBoxDesign = {
  fixture: 'nestjs-adyen-saga',
  compilerOptions: { experimentalDecorators: true, emitDecoratorMetadata: true },
  path: '/api/v1/orders',
  principalHeader: 'x-account',
  principals: ['acct_1', 'acct_2'],
  body: (variant) => ({
    cartId: variant === 'other' ? 'cart-99' : variant === 'declined' ? 'cart-declined' : 'cart-12',
    items: [{ sku: 'SKU-1', quantity: 2 }],
    shippingAddressId: 'addr-9',
    note: 'not significant',
  }),
  location: (run) => `/api/v1/orders/ord_${run}`,
  idPrefix: 'ord_',
  mismatchStatus: 422,
};
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
      counters.runs += 1;
      if (request.headers['x-probe'] && probes.current) await probe(request, probes.current);
      await new Promise((resolve) => setTimeout(resolve, 150)); // every duplicate arrives while this one runs
      if (request.headers['x-fail']) throw new Error('Adyen timed out');
      if (body.cartId === 'cart-declined') throw new HttpException({ error: 'card declined', attempt: counters.runs }, 402);
      res.location(`/api/v1/orders/ord_${counters.runs}`);
      return { orderId: `ord_${counters.runs}`, cartId: body.cartId };
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

const probes: { current?: Probes } = {};
const startNest: StartApp = async (scaffold, pool, counters) => {
  const app = await buildApp(scaffold, pool, counters, probes);
  return overHttp(urlOf(app), () => app.close());
};

/** What only this app shows: the ambient claim in an injected service, headers sent as recorded, the saga's consumer. */
function describeNestSpecifics(suite: Suite): void {
  it('a service the handler calls reads its own request\u2019s claim with idempotencyOf(), under two overlapping requests, and nothing once the claim ended', async () => {
    const current = probesFor(2);
    probes.current = current;
    expect(suite.scaffold.idempotencyOf()).toBeUndefined();
    const [first, second] = await Promise.all([
      suite.send('key-probe-a', { headers: { 'x-probe': '1' } }),
      suite.send('key-probe-b', { principal: 'acct_2', headers: { 'x-probe': '1' } }),
    ]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(current.seen.map((s) => s.key).sort()).toEqual(['key-probe-a', 'key-probe-b']);
    for (const { key, ambient, own } of current.seen) {
      expect(ambient?.key).toBe(key);
      expect(ambient).toBe(own);
    }
    // What the handlers left pending runs after their claims ended: it sees no claim, nor the other request's.
    current.answer();
    expect(await Promise.all(current.late)).toEqual([undefined, undefined]);
    expect(suite.scaffold.idempotencyOf()).toBeUndefined();
    delete probes.current;
  });

  it('the first answer carries the same headers the replay will: what was recorded is what was sent', async () => {
    const first = await suite.send('key-headers');
    const replay = await suite.send('key-headers');
    for (const name of ['content-type', 'location', 'etag']) expect(replay.headers.get(name), name).toBe(first.headers.get(name));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await replay.text()).toBe(await first.text());
  });

  it('the BullMQ consumer (capturePayment) runs once per derived key through core.runOnce', async () => {
    const { scaffold } = suite;
    const job = { orderId: 'ord_7', pspReference: 'PSP99', amount: { value: 1299, currency: 'EUR' } };
    const action = scaffold.ACTIONS.capturePayment;
    const request = {
      scope: 'global',
      key: scaffold.deriveKey(action.codeName, scaffold.pickFields(action.key.from, { body: job })),
      fingerprint: scaffold.computeFingerprint({ method: 'CONSUME', route: action.route, fields: scaffold.pickFields(action.significantFields, { body: job }) }),
    };
    let captures = 0;
    const capture = async () => ({ captured: ++captures });
    const core = () => scaffold.createIdempotency({ pool: suite.pool, principal: () => undefined }).core;
    const first = await core().runOnce(action, request, capture);
    const redelivered = await core().runOnce(action, request, capture);
    expect(captures).toBe(1);
    expect(first).toEqual({ result: { captured: 1 }, replayed: false });
    expect(redelivered).toEqual({ result: { captured: 1 }, replayed: true });
  });
}

await describeBlackBox('nestjs', { 'NestJS app on the generated interceptor': startNest }, { refusals: true, design: MARKETPLACE, scenarios: describeNestSpecifics });
