import { rm } from 'node:fs/promises';
import net from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

/** How many times the design's action ran (a booking, or an order in the marketplace design). */
export interface Counters {
  runs: number;
}

/** The bookings design's booking route, as every adapter's app answers them (the framework only maps in and out). */
export interface Answer {
  readonly status: number;
  readonly location?: string;
  readonly json: unknown;
}

/** The booking action: slow enough that duplicates overlap; x-fail throws, room-declined is a definitive 402. */
export async function bookRoom(counters: Counters, body: { roomId?: string } | undefined, fail: boolean): Promise<Answer> {
  counters.runs += 1;
  const attempt = counters.runs;
  await new Promise((resolve) => setTimeout(resolve, 150));
  if (fail) throw new Error('payment provider timed out');
  if (body?.roomId === 'room-declined') return { status: 402, json: { error: 'card declined', attempt } };
  return { status: 201, location: `/bookings/bk_${attempt}`, json: { bookingId: `bk_${attempt}`, roomId: body?.roomId } };
}

export interface RunningApp {
  /** Sends one request to the app: over HTTP, or straight into a route handler as a Web Request. */
  send(path: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Builds the app on the generated scaffold. Scoped keys belong to the design's principal header; `x-refuse: <status>`
 * must be answered before the action by the app's own auth / rate-limit layer when `refusals` is set.
 */
export type StartApp = (scaffold: Loose, pool: pg.Pool, counters: Counters) => Promise<RunningApp>;

export const FIXTURE = 'fastify-bookings-stripe';

/** The design a suite runs: its fixture, the action's request, and what the design answers where designs differ. */
export interface BlackBoxDesign {
  fixture: string;
  compilerOptions?: Record<string, unknown>;
  path: string;
  /** The header the app reads the principal from, and two principals. */
  principalHeader: string;
  principals: readonly [string, string];
  /** The request body: the usual one, one whose significant fields differ, or one the action declines with 402. */
  body(variant?: 'other' | 'declined'): Record<string, unknown>;
  /** The Location of the answer to the action's n-th run. */
  location(run: number): string;
  /** What starts the id of what the action made, in its answer (never in a refusal). */
  idPrefix: string;
  mismatchStatus: number;
}

/** The bookings design (lease mode, Stripe, 409 on mismatch) that every adapter is generated for. */
export const BOOKINGS: BlackBoxDesign = {
  fixture: FIXTURE,
  path: '/bookings',
  principalHeader: 'x-user',
  principals: ['usr_1', 'usr_2'],
  body: (variant) => ({
    roomId: variant === 'other' ? 'room-99' : variant === 'declined' ? 'room-declined' : 'room-12',
    checkIn: '2026-03-01',
    checkOut: '2026-03-04',
    guests: 2,
    note: 'not significant',
  }),
  location: (run) => `/bookings/bk_${run}`,
  idPrefix: 'bk_',
  mismatchStatus: 409,
};

/** The running app against a fresh schema, for scenarios a suite adds beside the shared ones; set before they run. */
export interface Suite {
  scaffold: Loose;
  pool: pg.Pool;
  counters: Counters;
  /** The design's request under `key` (no header when undefined), as `principal` (the first one by default). */
  send(key: string | undefined, opts?: { principal?: string; variant?: 'other' | 'declined'; headers?: Record<string, string> }): Promise<Response>;
  /** Runs `work` and counts the action's runs it caused. */
  runs<T>(work: () => Promise<T>): Promise<{ result: T; ran: number }>;
}

interface BlackBoxOptions {
  refusals: boolean;
  design?: BlackBoxDesign;
  /** More scenarios against each app on PostgreSQL, with the shared ones. */
  scenarios?: (suite: Suite) => void;
  more?: (compiled: () => { scaffold: Loose; generated: Generated; skip: string | undefined }) => void;
}

/**
 * The black-box scenarios every adapter passes, on its design (the bookings one unless given) against the real
 * PostgreSQL, plus the fail-closed answer when the store hangs.
 */
export async function describeBlackBox(framework: string, apps: Record<string, StartApp>, options: BlackBoxOptions): Promise<void> {
  const design = options.design ?? BOOKINGS;
  const skip = await postgresSkipReason();
  if (skip) console.warn(`${framework} black-box tests against PostgreSQL skipped: ${skip}`);
  const patch = (raw: Record<string, unknown>) => ((raw.stack as Record<string, unknown>).framework = framework);
  let generated: Generated | undefined;
  let scaffold: Loose;

  describe(`${framework} on the generated scaffold`, () => {
    beforeAll(async () => {
      generated = await generateAndCompile(await modelFor(design.fixture, patch), `${framework}-blackbox`, design.compilerOptions);
      expect(generated.tscOutput).toBe('');
      scaffold = await loadScaffold(generated);
    });
    afterAll(async () => {
      if (generated) await rm(generated.dir, { recursive: true, force: true });
    });

    for (const [label, start] of Object.entries(apps)) {
      describeAgainstPostgres(label, start);
      describeOutage(label, start);
    }
    options.more?.(() => ({ scaffold, generated: generated!, skip }));
  });

  function describeAgainstPostgres(label: string, start: StartApp): void {
    describe.skipIf(skip !== undefined)(`${label}, against PostgreSQL`, () => {
      let schema: Schema;
      let app: RunningApp;
      const counters: Counters = { runs: 0 };
      const [first, second] = design.principals;
      const send: Suite['send'] = (key, opts = {}) => {
        const headers: Record<string, string> = { 'content-type': 'application/json', [design.principalHeader]: opts.principal ?? first, ...opts.headers };
        if (key !== undefined) headers['idempotency-key'] = key;
        return app.send(design.path, { method: 'POST', headers, body: JSON.stringify(design.body(opts.variant)) });
      };
      const runs = async <T>(work: () => Promise<T>) => {
        const before = counters.runs;
        const result = await work();
        return { result, ran: counters.runs - before };
      };
      const suite: Suite = { scaffold: undefined, pool: undefined as unknown as pg.Pool, counters, send, runs };

      beforeAll(async () => {
        schema = await createSchema(generated!, framework);
        app = await start(scaffold, schema.pool, counters);
        Object.assign(suite, { scaffold, pool: schema.pool });
      });

      afterAll(async () => {
        await app?.close();
        await schema?.drop();
      });

      it('50 concurrent requests with one key: the action runs once, the rest get 409 + Retry-After or the replay, none a 5xx', async () => {
        const { result: responses, ran } = await runs(() => Promise.all(Array.from({ length: 50 }, () => send('"7c0a5b1e-concurrent"'))));
        expect(ran).toBe(1);
        const statuses = responses.map((response) => response.status);
        expect(statuses.filter((status) => status >= 500)).toEqual([]);
        expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
        for (const response of responses.filter((r) => r.status === 409)) {
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(response.headers.get('content-type')).toContain('application/problem+json');
        }
        const originals = responses.filter((r) => r.status === 201);
        const bodies = await Promise.all(originals.map((r) => r.arrayBuffer().then((bytes) => Buffer.from(bytes))));
        expect(new Set(bodies.map((body) => body.toString('hex'))).size).toBe(1);

        // The structured-field form and the bare form name the same key: the replay has the recorded bytes and headers.
        const { result: replay, ran: again } = await runs(() => send('7c0a5b1e-concurrent'));
        expect(again).toBe(0);
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.headers.get('location')).toBe(design.location(counters.runs));
        expect(replay.headers.get('content-type')).toContain('application/json');
        expect(replay.headers.get('content-type')).toBe(originals[0]!.headers.get('content-type'));
        expect(Buffer.from(await replay.arrayBuffer()).equals(bodies[0]!)).toBe(true);
        const { rows } = await schema.pool.query("SELECT status, response_status FROM idempotency_store WHERE key = '7c0a5b1e-concurrent'");
        expect(rows).toEqual([{ status: 'COMPLETED', response_status: 201 }]);
      });

      it('rejects missing, empty, over-long, control-character and malformed structured keys with 400 problem+json', async () => {
        const { ran } = await runs(async () => {
          for (const key of [undefined, '', '""', 'a'.repeat(256), 'bad\tkey', '"un"quoted"']) {
            const response = await send(key);
            expect(response.status, JSON.stringify(key)).toBe(400);
            expect(response.headers.get('content-type')).toContain('application/problem+json');
          }
        });
        expect(ran).toBe(0);
      });

      it(`same key with a different request: ${design.mismatchStatus} (this design) problem+json that never carries the stored body`, async () => {
        expect((await send('key-mismatch')).status).toBe(201);
        const { result: again, ran } = await runs(() => send('key-mismatch', { variant: 'other' }));
        expect(ran).toBe(0);
        expect(again.status).toBe(design.mismatchStatus);
        expect(again.headers.get('content-type')).toContain('application/problem+json');
        expect(again.headers.get('idempotent-replayed')).toBeNull();
        const text = await again.text();
        expect(text).not.toContain(design.idPrefix);
        expect((JSON.parse(text) as { type: string }).type).toMatch(/key-mismatch$/);
      });

      it('a definitive 4xx (402) from the action is stored and replayed; a 5xx releases the key so a retry runs again', async () => {
        const declined = await send('key-declined', { variant: 'declined' });
        expect(declined.status).toBe(402);
        // Recorded before it was sent: the row is final the moment the client has the answer.
        const recorded = await schema.pool.query("SELECT status, response_status FROM idempotency_store WHERE key = 'key-declined'");
        expect(recorded.rows).toEqual([{ status: 'FAILED', response_status: 402 }]);
        const declinedBody = await declined.text();
        expect(JSON.parse(declinedBody)).toEqual({ error: 'card declined', attempt: counters.runs });
        const { result: replay, ran } = await runs(() => send('key-declined', { variant: 'declined' }));
        expect(ran).toBe(0);
        expect(replay.status).toBe(402);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(await replay.text()).toBe(declinedBody);

        const failed = await runs(() => send('key-failing', { headers: { 'x-fail': '1' } }));
        expect(failed.result.status).toBe(500);
        expect(failed.ran).toBe(1);
        const retry = await runs(() => send('key-failing'));
        expect(retry.result.status).toBe(201);
        expect(retry.ran).toBe(1);
      });

      // Only apps with a layer of their own before the action (auth or rate-limit middleware) have this scenario.
      if (options.refusals) it('401/403/429 answered before the action are never stored: the same key then runs normally', async () => {
        for (const status of [401, 403, 429]) {
          const refused = await runs(() => send(`key-refused-${status}`, { headers: { 'x-refuse': String(status) } }));
          expect(refused.result.status).toBe(status);
          expect(refused.ran).toBe(0);
          const { rows } = await schema.pool.query('SELECT 1 FROM idempotency_store WHERE key = $1', [`key-refused-${status}`]);
          expect(rows).toEqual([]);
          const accepted = await runs(() => send(`key-refused-${status}`));
          expect(accepted.result.status).toBe(201);
          expect(accepted.result.headers.get('idempotent-replayed')).toBeNull();
          expect(accepted.ran).toBe(1);
        }
      });

      it('no principal: 401 problem from the adapter itself, nothing claimed', async () => {
        const anonymous = await app.send(design.path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'key-anon' }, body: '{}' });
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
        const { rows } = await schema.pool.query("SELECT 1 FROM idempotency_store WHERE key = 'key-anon'");
        expect(rows).toEqual([]);
      });

      it("records are scoped to (principal, key): another principal's identical key runs as their own and never sees the first", async () => {
        const mine = await (await send('key-shared', { principal: first })).text();
        const { result: theirs, ran } = await runs(() => send('key-shared', { principal: second, variant: 'other' }));
        expect(ran).toBe(1);
        expect(theirs.status).toBe(201);
        expect(theirs.headers.get('idempotent-replayed')).toBeNull();
        expect(await theirs.text()).not.toBe(mine);
        const { rows } = await schema.pool.query("SELECT scope FROM idempotency_store WHERE key = 'key-shared' ORDER BY scope");
        expect(rows).toEqual([{ scope: first }, { scope: second }]);
      });

      options.scenarios?.(suite);
    });
  }

  /** The store stops answering (a port that accepts and never replies): needs no database, so it never skips. */
  function describeOutage(label: string, start: StartApp): void {
    describe(`${label}, while PostgreSQL is unreachable`, () => {
      let blackHole: net.Server;
      const sockets: net.Socket[] = [];

      beforeAll(async () => {
        blackHole = net.createServer((socket) => void sockets.push(socket));
        await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
      });

      afterAll(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => blackHole?.close(resolve));
      });

      it('answers 503 + Retry-After and never runs the action', async () => {
        const pool: pg.Pool = scaffold.createPool(`postgres://postgres@127.0.0.1:${(blackHole.address() as net.AddressInfo).port}/test`, scaffold.POLICY);
        const counters: Counters = { runs: 0 };
        const running = await start(scaffold, pool, counters);
        try {
          const responses = await Promise.all(
            Array.from({ length: 5 }, (_, i) =>
              running.send(design.path, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'idempotency-key': `outage-${i}`, [design.principalHeader]: design.principals[0] },
                body: JSON.stringify(design.body()),
              }),
            ),
          );
          for (const response of responses) {
            expect(response.status).toBe(503);
            expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
            expect(response.headers.get('content-type')).toContain('application/problem+json');
          }
          expect(counters.runs).toBe(0);
        } finally {
          await running.close();
          void pool.end().catch(() => undefined);
        }
      });
    });
  }
}

/** For apps served over HTTP: send() is fetch against the listening address. */
export function overHttp(url: string, close: () => Promise<void>): RunningApp {
  return { send: (path, init) => fetch(url + path, init), close };
}
