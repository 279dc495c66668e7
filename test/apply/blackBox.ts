import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import Stripe from 'stripe';
import { throwawaySchema } from '../scaffold/harness.js';

export interface AppSchema {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A throwaway schema with the store's migration and the app's own table, so parallel suites never share rows. */
export async function createAppSchema(label: string, migration: string, appDdl: string): Promise<AppSchema> {
  // The app under test runs on its real store: vitest sets NODE_ENV=test, which the instance apply writes reads as
  // "the app's own tests: keep keys in memory".
  process.env['IDEMPOTENCY_STORE'] = 'database';
  const schema = await throwawaySchema(`idem_apply_${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`, 4);
  await schema.pool.query(migration);
  await schema.pool.query(appDdl);
  return schema;
}

/**
 * Answers like Stripe's PaymentIntents endpoint and remembers each request's Idempotency-Key. `failNext()` answers the
 * next request 500, as a Stripe outage would, so the protected route fails and its retry runs it again.
 */
export async function fakeStripe(): Promise<{ base: string; keys: string[]; failNext(): void; close(): Promise<void> }> {
  const keys: string[] = [];
  let failing = false;
  const server: Server = createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key'] ?? ''));
    req.resume();
    req.on('end', () => {
      if (failing) {
        failing = false;
        res.writeHead(500, { 'content-type': 'application/json', 'request-id': 'req_test' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: 'Stripe is having a moment' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_test' });
      res.end(JSON.stringify({ id: `pi_${keys.length}`, object: 'payment_intent', status: 'requires_payment_method' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    failNext: () => {
      failing = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface Burst {
  statuses: number[];
  bodies: string[];
}

/** `count` identical requests (same key, same body, same user) released together. */
export async function burst(url: string, count: number, init: { key: string; user: string; body: unknown }): Promise<Burst> {
  const responses = await Promise.all(
    Array.from({ length: count }, () =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': init.key, 'x-user-id': init.user },
        body: JSON.stringify(init.body),
      }).then(async (res) => ({ status: res.status, body: await res.text() })),
    ),
  );
  return { statuses: responses.map((r) => r.status), bodies: responses.map((r) => r.body) };
}

/** Statuses a duplicate may legitimately get: the one 201 (or its replay), 409 in flight, 503 store busy (fail closed). */
export const DUPLICATE_STATUSES = new Set([201, 409, 503]);

/**
 * Retries the same request (same key) until the stored 201 is replayed: a loaded machine may answer every member of
 * a burst 409 or 503. Polls on the app's answer with a generous overall deadline, never on a fixed sleep.
 */
export async function settled(url: string, init: { key: string; user: string; body: unknown }, deadlineMs = 30_000): Promise<{ status: number; body: string }> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': init.key, 'x-user-id': init.user }, body: JSON.stringify(init.body) });
    const answer = { status: res.status, body: await res.text() };
    if (answer.status === 201 || !DUPLICATE_STATUSES.has(answer.status) || Date.now() > until) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? '0') * 1000 || 50));
  }
}

/**
 * The black-box check every apply fixture test makes: `count` concurrent requests with one key, then the same request
 * until its stored answer replays. Every member gets the one 201 (or its replay), 409 or 503; the 201s are the same
 * bytes; `executions()` (the app's own table) saw one row.
 */
export async function expectOneExecution(url: string, request: { key: string; user: string; body: unknown }, executions: () => Promise<number>, count = 50): Promise<{ result: Burst; final: { status: number; body: string } }> {
  const { expect } = await import('vitest');
  const result = await burst(url, count, request);
  const final = await settled(url, request);
  expect(result.statuses.every((s) => DUPLICATE_STATUSES.has(s)), result.statuses.join(',')).toBe(true);
  expect(final.status, final.body).toBe(201);
  const created = [...result.bodies.filter((_, i) => result.statuses[i] === 201), final.body];
  expect(new Set(created).size).toBe(1);
  expect(await executions()).toBe(1);
  return { result, final };
}

/** The webhook secret the fixture apps read from STRIPE_WEBHOOK_SECRET. */
export const WEBHOOK_SECRET = 'whsec_fixture';

/** A signed Stripe delivery of one event, as Stripe resends it: same bytes, same signature. */
export function signedStripeEvent(id: string): { payload: string; signature: string } {
  const payload = JSON.stringify({ id, object: 'event', type: 'payment_intent.succeeded', data: { object: { id: `pi_${id}`, object: 'payment_intent' } } });
  return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) };
}

/** The request init that posts one delivery the way Stripe does. */
export function stripeDelivery(delivery: { payload: string; signature: string }): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': delivery.signature }, body: delivery.payload };
}
