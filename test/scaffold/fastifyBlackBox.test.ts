import { rm } from 'node:fs/promises';
import net from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`Fastify black-box tests against PostgreSQL skipped: ${skip}`);

const userOf = (request: FastifyRequest) => request.headers['x-user']?.toString();

/**
 * A Fastify app on the generated hooks for the bookings design: an onRequest hook stands in for auth and rate
 * limiting (it answers before the action), the booking handler is slow enough for duplicates to overlap.
 */
function buildApp(scaffold: Loose, pool: pg.Pool, counters: { bookings: number }): FastifyInstance {
  const idempotency = scaffold.createIdempotency({ pool, principal: userOf });
  const app = Fastify();
  app.addHook('onRequest', async (request, reply) => {
    const refusal = Number(request.headers['x-refuse']);
    if (refusal) return reply.code(refusal).send({ error: 'refused before the action' });
    return undefined;
  });
  app.post('/bookings', idempotency.createBooking, async (request: FastifyRequest<{ Body: { roomId: string } }>, reply: FastifyReply) => {
    counters.bookings += 1;
    await new Promise((resolve) => setTimeout(resolve, 150)); // every duplicate arrives while this one runs
    if (request.headers['x-fail']) throw new Error('payment provider timed out');
    if (request.body.roomId === 'room-declined') return reply.code(402).send({ error: 'card declined', attempt: counters.bookings });
    return reply.code(201).header('location', `/bookings/bk_${counters.bookings}`).send({ bookingId: `bk_${counters.bookings}`, roomId: request.body.roomId });
  });
  return app;
}

describe.skipIf(skip !== undefined)('Fastify app on the generated hooks, against PostgreSQL', () => {
  let generated: Generated;
  let schema: Schema;
  let app: FastifyInstance;
  let url = '';
  const counters = { bookings: 0 };

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('fastify-bookings-stripe'), 'fastify-blackbox');
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'fastify');
    app = buildApp(await loadScaffold(generated), schema.pool, counters);
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const book = (key: string | undefined, options: { user?: string; roomId?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-user': options.user ?? 'usr_1', ...options.headers };
    if (key !== undefined) headers['idempotency-key'] = key;
    const body = { roomId: options.roomId ?? 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2, note: 'not significant' };
    return fetch(`${url}/bookings`, { method: 'POST', headers, body: JSON.stringify(body) });
  };
  const runs = async <T>(work: () => Promise<T>) => {
    const before = counters.bookings;
    const result = await work();
    return { result, ran: counters.bookings - before };
  };

  it('50 concurrent requests with one key: the action runs once, the rest get 409 + Retry-After or the replay, none a 5xx', async () => {
    const { result: responses, ran } = await runs(() => Promise.all(Array.from({ length: 50 }, () => book('"7c0a5b1e-concurrent"'))));
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
    const { result: replay, ran: again } = await runs(() => book('7c0a5b1e-concurrent'));
    expect(again).toBe(0);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(`/bookings/bk_${counters.bookings}`);
    expect(replay.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await replay.text()).toBe(bodies[0]);
    const { rows } = await schema.pool.query("SELECT status FROM idempotency_store WHERE key = '7c0a5b1e-concurrent'");
    expect(rows).toEqual([{ status: 'COMPLETED' }]);
  });

  it('rejects missing, empty, over-long, control-character and malformed structured keys with 400 problem+json', async () => {
    const { ran } = await runs(async () => {
      for (const key of [undefined, '', '""', 'a'.repeat(256), 'bad\tkey', '"un"quoted"']) {
        const response = await book(key);
        expect(response.status, JSON.stringify(key)).toBe(400);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
    });
    expect(ran).toBe(0);
  });

  it('same key with a different request: 409 (this design) problem+json that never carries the stored body', async () => {
    const first = await book('key-mismatch');
    expect(first.status).toBe(201);
    const { result: second, ran } = await runs(() => book('key-mismatch', { roomId: 'room-99' }));
    expect(ran).toBe(0);
    expect(second.status).toBe(409);
    expect(second.headers.get('content-type')).toContain('application/problem+json');
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const text = await second.text();
    expect(text).not.toContain('bk_');
    expect(JSON.parse(text).type).toMatch(/key-mismatch$/);
  });

  it('a definitive 4xx (402) from the action is stored and replayed; a 5xx releases the key so a retry runs again', async () => {
    const declined = await book('key-declined', { roomId: 'room-declined' });
    expect(declined.status).toBe(402);
    // Recorded before it was sent: the row is final the moment the client has the answer.
    const recorded = await schema.pool.query("SELECT status, response_status FROM idempotency_store WHERE key = 'key-declined'");
    expect(recorded.rows).toEqual([{ status: 'FAILED', response_status: 402 }]);
    const declinedBody = await declined.text();
    const { result: replay, ran } = await runs(() => book('key-declined', { roomId: 'room-declined' }));
    expect(ran).toBe(0);
    expect(replay.status).toBe(402);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(declinedBody);

    const failed = await runs(() => book('key-failing', { headers: { 'x-fail': '1' } }));
    expect(failed.result.status).toBe(500);
    expect(failed.ran).toBe(1);
    const retry = await runs(() => book('key-failing'));
    expect(retry.result.status).toBe(201);
    expect(retry.ran).toBe(1);
  });

  it('401/403/429 answered before the action are never stored: the same key then runs normally', async () => {
    for (const status of [401, 403, 429]) {
      const refused = await runs(() => book(`key-refused-${status}`, { headers: { 'x-refuse': String(status) } }));
      expect(refused.result.status).toBe(status);
      expect(refused.ran).toBe(0);
      const accepted = await runs(() => book(`key-refused-${status}`));
      expect(accepted.result.status).toBe(201);
      expect(accepted.result.headers.get('idempotent-replayed')).toBeNull();
      expect(accepted.ran).toBe(1);
    }
    // No principal at all: 401 from the hooks themselves, nothing claimed.
    const anonymous = await fetch(`${url}/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'key-anon' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    const { rows } = await schema.pool.query("SELECT 1 FROM idempotency_store WHERE key = 'key-anon' OR key LIKE 'key-refused-%' AND status <> 'COMPLETED'");
    expect(rows).toEqual([]);
  });

  it("records are scoped to (principal, key): another user's identical key runs as their own and never sees the first", async () => {
    const mine = await (await book('key-shared', { user: 'usr_1' })).text();
    const { result: theirs, ran } = await runs(() => book('key-shared', { user: 'usr_2', roomId: 'room-77' }));
    expect(ran).toBe(1);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await theirs.text()).not.toBe(mine);
    const { rows } = await schema.pool.query("SELECT scope FROM idempotency_store WHERE key = 'key-shared' ORDER BY scope");
    expect(rows).toEqual([{ scope: 'usr_1' }, { scope: 'usr_2' }]);
  });
});

/**
 * The store stops answering: a TCP port that accepts connections and never replies (a partition or a hung server),
 * worse than a refused connection because nothing errors on its own. Needs no database, so it never skips.
 */
describe('Fastify app while PostgreSQL is unreachable', () => {
  let generated: Generated;
  let scaffold: Loose;
  let blackHole: net.Server;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('fastify-bookings-stripe'), 'fastify-outage');
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
    const counters = { bookings: 0 };
    const app = buildApp(scaffold, pool, counters);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          fetch(`${url}/bookings`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `outage-${i}`, 'x-user': 'usr_1' },
            body: JSON.stringify({ roomId: 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2 }),
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
      expect(counters.bookings).toBe(0);
    } finally {
      await app.close();
      void pool.end().catch(() => undefined);
    }
  });
});
