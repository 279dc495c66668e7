import { rm } from 'node:fs/promises';
import net from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE } from './adapterBlackBox.js';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`plain idempotent(fn) tests against PostgreSQL skipped: ${skip}`);

const INPUT = { roomId: 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2, note: 'not significant' };

/** The plain wrapper as a tRPC procedure or a script would call it: no HTTP anywhere. */
describe('plain idempotent(fn) on the generated scaffold', () => {
  let generated: Generated;
  let scaffold: Loose;

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor(FIXTURE, (raw) => ((raw.stack as Record<string, unknown>).framework = 'none')), 'plain-blackbox');
    expect(generated.tscOutput).toBe('');
    scaffold = await loadScaffold(generated);
  });
  afterAll(async () => {
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  describe.skipIf(skip !== undefined)('against PostgreSQL', () => {
    let schema: Schema;
    let idempotency: Loose;
    let executions = 0;
    const book = async (context: { key: string }) => {
      executions += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { bookingId: `bk_${executions}`, key: context.key, at: new Date(0) };
    };

    beforeAll(async () => {
      schema = await createSchema(generated, 'plain');
      idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: () => undefined });
    });
    afterAll(async () => {
      await schema?.drop();
    });

    it('50 concurrent calls with one key run once; the rest get InFlightError or the stored JSON result', async () => {
      const call = { scope: 'usr_1', key: 'plain-concurrent', fingerprintInput: INPUT };
      const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => idempotency.idempotent('createBooking', call, book)));
      expect(executions).toBe(1);
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('InFlightError');
      const first = outcomes.find((outcome) => outcome.status === 'fulfilled')!.value as unknown;
      const repeat = await idempotency.createBooking.detailed(call, book);
      expect(executions).toBe(1);
      expect(repeat).toEqual({ result: first, replayed: true });
      expect(first).toEqual({ bookingId: 'bk_1', key: 'plain-concurrent', at: '1970-01-01T00:00:00.000Z' });
    });

    it('other input under the key: MismatchError; malformed key: InvalidKeyError; no scope: PrincipalMissingError; nothing runs', async () => {
      await idempotency.idempotent('createBooking', { scope: 'usr_1', key: 'plain-mismatch', fingerprintInput: INPUT }, book);
      const before = executions;
      const attempt = (call: object) => idempotency.idempotent('createBooking', call, book);
      await expect(attempt({ scope: 'usr_1', key: 'plain-mismatch', fingerprintInput: { ...INPUT, roomId: 'room-99' } })).rejects.toMatchObject({ name: 'MismatchError' });
      // A field outside the significant ones does not change the fingerprint: that is a repeat, not a mismatch.
      await attempt({ scope: 'usr_1', key: 'plain-mismatch', fingerprintInput: { ...INPUT, note: 'changed' } });
      for (const key of ['', 'bad key', 'a,b', 'x'.repeat(256), undefined])
        await expect(attempt({ scope: 'usr_1', key, fingerprintInput: INPUT })).rejects.toMatchObject({ name: 'InvalidKeyError' });
      await expect(attempt({ key: 'plain-anonymous', fingerprintInput: INPUT })).rejects.toMatchObject({ name: 'PrincipalMissingError' });
      expect(executions).toBe(before);
    });

    it('a thrown function releases the key: the retry runs again', async () => {
      const call = { scope: 'usr_1', key: 'plain-failing', fingerprintInput: INPUT };
      await expect(idempotency.idempotent('createBooking', call, async () => Promise.reject(new Error('provider timed out')))).rejects.toThrow('provider timed out');
      const before = executions;
      await idempotency.idempotent('createBooking', call, book);
      expect(executions).toBe(before + 1);
    });

    it('idempotencyOf() is undefined once the claim ended: a timer or promise the function left pending sees no stale claim', async () => {
      // The barrier: what the function leaves pending runs only once the test opens it, after the call settled.
      let open!: () => void;
      const barrier = new Promise<void>((resolve) => (open = resolve));
      const late: Array<Promise<unknown>> = [];
      const leavePending = (context: unknown) => {
        expect(scaffold.idempotencyOf()).toBe(context);
        late.push(new Promise((resolve) => setTimeout(() => void barrier.then(() => resolve(scaffold.idempotencyOf())), 0)));
        late.push(barrier.then(() => scaffold.idempotencyOf()));
      };
      // Completed, and failed (the claim released).
      await idempotency.idempotent('createBooking', { scope: 'usr_1', key: 'plain-late-done', fingerprintInput: INPUT }, async (context: unknown) => {
        leavePending(context);
        return { done: true };
      });
      await expect(
        idempotency.idempotent('createBooking', { scope: 'usr_1', key: 'plain-late-failed', fingerprintInput: INPUT }, async (context: unknown) => {
          leavePending(context);
          throw new Error('provider timed out');
        }),
      ).rejects.toThrow('provider timed out');
      open();
      expect(await Promise.all(late)).toEqual([undefined, undefined, undefined, undefined]);
      expect(scaffold.idempotencyOf()).toBeUndefined();
    });

    it('transactional mode: writes through context.db commit with the record, or roll back with a thrown function', async () => {
      await schema.pool.query('CREATE TABLE bookings (key text NOT NULL)');
      const action = { ...scaffold.ACTIONS.createBooking, mode: 'transactional' };
      const run = scaffold.idempotent(action, { core: idempotency.core, principal: () => 'usr_1' });
      const write = async (context: { key: string; db: pg.PoolClient }) => {
        await context.db.query('INSERT INTO bookings (key) VALUES ($1)', [context.key]);
        // Deeper code finds the same claim without it being passed down.
        expect(scaffold.idempotencyOf()).toBe(context);
      };
      await expect(run({ key: 'plain-tx', fingerprintInput: INPUT }, async (context: { key: string; db: pg.PoolClient }) => {
        await write(context);
        throw new Error('after the write');
      })).rejects.toThrow('after the write');
      expect((await schema.pool.query('SELECT count(*)::int AS n FROM bookings')).rows).toEqual([{ n: 0 }]);
      await run({ key: 'plain-tx', fingerprintInput: INPUT }, async (context: { key: string; db: pg.PoolClient }) => write(context));
      await run({ key: 'plain-tx', fingerprintInput: INPUT }, async (context: { key: string; db: pg.PoolClient }) => write(context));
      expect((await schema.pool.query('SELECT count(*)::int AS n FROM bookings')).rows).toEqual([{ n: 1 }]);
    });
  });

  it('store unreachable: StoreUnavailableError before anything runs; problemForError answers it 503 + Retry-After like every adapter', async () => {
    const sockets: net.Socket[] = [];
    const blackHole = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const pool: pg.Pool = scaffold.createPool(`postgres://postgres@127.0.0.1:${(blackHole.address() as net.AddressInfo).port}/test`, scaffold.POLICY);
    try {
      const idempotency = scaffold.createIdempotency({ pool, principal: () => 'usr_1' });
      let ran = false;
      const refusal = (key: string) => idempotency.idempotent('createBooking', { key, fingerprintInput: INPUT }, async () => (ran = true)).then(() => undefined, (error: unknown) => error);
      const errors = await Promise.all(Array.from({ length: 3 }, (_, i) => refusal(`plain-outage-${i}`)));
      expect(ran).toBe(false);
      // The answer an HTTP transport sends for each (the generated suite serves the wrapper over node:http with it).
      for (const error of errors) {
        expect(error).toMatchObject({ name: 'StoreUnavailableError' });
        const problem = scaffold.problemForError(error, scaffold.POLICY) as { status: number; retryAfterSeconds?: number; title: string };
        expect(problem).toMatchObject({ status: 503, title: 'Service unavailable' });
        expect(problem.retryAfterSeconds).toBeGreaterThan(0);
      }
      // A refusal a retry cannot fix carries no Retry-After, as in the adapters.
      const malformed = scaffold.problemForError(await refusal('bad key'), scaffold.POLICY) as { status: number; retryAfterSeconds?: number };
      expect(malformed.status).toBe(400);
      expect(malformed.retryAfterSeconds).toBeUndefined();
      expect(ran).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackHole.close(resolve));
      void pool.end().catch(() => undefined);
    }
  });
});
