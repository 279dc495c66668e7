import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type IdempotencyStore,
} from './types.js';

/** What the contract needs to drive one store implementation on its real server. */
export interface StoreContractSubject {
  readonly store: IdempotencyStore;
  /** The same kind of store pointed at a server that does not answer (or a closed database), short time-outs. */
  unavailable(): Promise<IdempotencyStore>;
  /** Deletes expired records once, returning how many; omit it when the store expires records itself (TTL). */
  cleanup?(): Promise<number>;
  close(): Promise<void>;
}

const SCOPE = 'contract';
const STATE_WAIT_MS = 20_000;

/**
 * The black-box guarantees every IdempotencyStore must give, whatever its database: run it against your own store
 * with `runStoreContract('my store', async () => ({ store, unavailable, cleanup, close }))` in a test file.
 */
export function runStoreContract(name: string, open: () => Promise<StoreContractSubject>): void {
  describe(`store contract: ${name}`, () => {
    let subject: StoreContractSubject;
    let store: IdempotencyStore;
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(async () => {
      await subject?.close();
    });

    const input = (key: string, overrides: Partial<ClaimInput> = {}): ClaimInput => ({
      scope: SCOPE,
      key,
      action: 'contractAction',
      fingerprint: 'a'.repeat(64),
      algorithm: 'sha256-canonical-json-v1',
      leaseMs: 60_000,
      retentionMs: 60_000,
      ...overrides,
    });
    const fresh = (label: string) => `${label}-${randomBytes(16).toString('hex')}`;
    const claimed = (result: ClaimResult): ClaimRef => {
      if (result.outcome !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
      return result.ref;
    };
    const body = (text: string) => Buffer.from(text, 'utf8');

    it('claim race: of many concurrent claims on one key exactly one wins, the others see it in flight', async () => {
      const key = fresh('race');
      const results = await Promise.all(Array.from({ length: 16 }, () => store.claim(input(key))));
      const winners = results.filter((result) => result.outcome === 'claimed');
      expect(winners).toHaveLength(1);
      for (const result of results) {
        if (result.outcome === 'existing') expect(result.record.status).toBe('PROCESSING');
      }
    });

    it('lease takeover with fence: one taker after the lease lapses, the old token can no longer write', async () => {
      const key = fresh('fence');
      const old = claimed(await store.claim(input(key, { leaseMs: 200 })));
      await until(async () => (await store.read(SCOPE, key))?.leaseLive === false);
      // A different request body never takes over a lapsed claim: that would be another intent.
      const other = await store.claim(input(key, { fingerprint: 'b'.repeat(64) }));
      expect(other.outcome).toBe('existing');
      const takers = await Promise.all(Array.from({ length: 8 }, () => store.claim(input(key))));
      const won = takers.filter((result) => result.outcome === 'claimed');
      expect(won).toHaveLength(1);
      const taken = won[0]!;
      if (taken.outcome !== 'claimed') throw new Error('unreachable');
      expect(taken.reclaimed).toBe('orphan');
      expect(taken.attempt).toBe(2);
      expect(taken.ref.token).not.toBe(old.token);
      expect(
        await store.complete(old, 'COMPLETED', { status: 200, headers: {}, body: body('late') }, 60_000),
      ).toBe(false);
      expect(await store.extend(old, 60_000)).toBe(false);
      expect(await store.release(old)).toBe(false);
      expect(
        await store.complete(taken.ref, 'COMPLETED', { status: 201, headers: {}, body: body('new') }, 60_000),
      ).toBe(true);
      // Completing again with the same token is allowed: a completion whose answer was lost is retried.
      expect(
        await store.complete(taken.ref, 'COMPLETED', { status: 201, headers: {}, body: body('new') }, 60_000),
      ).toBe(true);
      const record = await store.read(SCOPE, key);
      expect(record?.status).toBe('COMPLETED');
      expect(record?.response?.body.toString()).toBe('new');
    });

    it('release and extend: a released claim is retaken at once; an extended lease stays live', async () => {
      const key = fresh('release');
      const first = claimed(await store.claim(input(key)));
      expect(await store.release(first)).toBe(true);
      const again = await store.claim(input(key));
      expect(again.outcome === 'claimed' && again.reclaimed).toBe('released');
      const second = claimed(again);
      expect(await store.extend(second, 120_000)).toBe(true);
      const record = await store.read(SCOPE, key);
      expect(record?.leaseLive).toBe(true);
      expect(record?.leaseRemainingMs).toBeGreaterThan(60_000);
    });

    it('replay fidelity: status, headers and every byte of the body come back exactly', async () => {
      const key = fresh('replay');
      const ref = claimed(await store.claim(input(key)));
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
      const headers = { 'content-type': 'application/octet-stream', location: '/things/42?x="1"' };
      expect(await store.complete(ref, 'FAILED', { status: 402, headers, body: bytes }, 60_000)).toBe(true);
      const result = await store.claim(input(key));
      if (result.outcome !== 'existing') throw new Error('a finished key was claimed again');
      expect(result.record.status).toBe('FAILED');
      expect(result.record.fingerprint).toBe('a'.repeat(64));
      expect(result.record.response?.status).toBe(402);
      expect(result.record.response?.headers).toEqual(headers);
      expect(result.record.response?.body.equals(bytes)).toBe(true);
      // An empty body stays empty, and a body too large to keep is reported as not replayable.
      const empty = claimed(await store.claim(input(fresh('empty'))));
      await store.complete(empty, 'COMPLETED', { status: 204, headers: {}, body: Buffer.alloc(0) }, 60_000);
      expect((await store.read(SCOPE, empty.key))?.response?.body.length).toBe(0);
      const large = claimed(await store.claim(input(fresh('large'))));
      await store.complete(
        large,
        'COMPLETED',
        { status: 200, headers: {}, body: Buffer.alloc(0), bodySha256: 'c'.repeat(64) },
        60_000,
      );
      expect((await store.read(SCOPE, large.key))?.notReplayable).toBe(true);
    });

    it('expiry: a finished key past its retention is claimed as new (attempt 1, no replay)', async () => {
      const key = fresh('expiry');
      const ref = claimed(await store.claim(input(key)));
      await store.complete(ref, 'COMPLETED', { status: 201, headers: {}, body: body('old') }, 300);
      let result: ClaimResult | undefined;
      await until(async () => {
        result = await store.claim(input(key, { fingerprint: 'd'.repeat(64) }));
        return result.outcome === 'claimed';
      });
      if (result?.outcome !== 'claimed') throw new Error('unreachable');
      expect(result.attempt).toBe(1);
      expect(['no', 'expired']).toContain(result.reclaimed);
      const record = await store.read(SCOPE, key);
      expect(record?.status).toBe('PROCESSING');
      expect(record?.response).toBeUndefined();
    });

    it('startedAt: every attempt of a record sees its first claim time; an expired key claimed as new, a later one', async () => {
      const key = fresh('started');
      const first = await store.claim(input(key, { leaseMs: 200 }));
      if (first.outcome !== 'claimed') throw new Error('expected a claim');
      // Epoch milliseconds (not seconds or microseconds), whole, on a clock close to this machine's.
      expect(Number.isInteger(first.startedAt)).toBe(true);
      expect(Math.abs(first.startedAt - Date.now()) < 86_400_000).toBe(true);
      await until(async () => (await store.read(SCOPE, key))?.leaseLive === false);
      const taken = await store.claim(input(key));
      if (taken.outcome !== 'claimed') throw new Error('expected a takeover');
      expect(taken.attempt).toBe(2);
      expect(taken.startedAt).toBe(first.startedAt);
      expect(await store.release(taken.ref)).toBe(true);
      const again = await store.claim(input(key));
      if (again.outcome !== 'claimed') throw new Error('expected a reclaim');
      expect(again.reclaimed).toBe('released');
      expect(again.startedAt).toBe(first.startedAt);
      await store.complete(again.ref, 'COMPLETED', { status: 201, headers: {}, body: body('first') }, 300);
      let renewed: ClaimResult | undefined;
      await until(async () => {
        renewed = await store.claim(input(key, { leaseMs: 200 }));
        return renewed.outcome === 'claimed';
      });
      if (renewed?.outcome !== 'claimed') throw new Error('unreachable');
      expect(renewed.attempt).toBe(1);
      expect(renewed.startedAt).toBeGreaterThan(first.startedAt);
      // And the new record's time is the one its own takeovers see.
      await until(async () => (await store.read(SCOPE, key))?.leaseLive === false);
      const later = await store.claim(input(key));
      expect(later.outcome === 'claimed' && later.startedAt).toBe(renewed.startedAt);
    });

    it('cleanup under traffic: expired records go, live and in-flight ones stay', async () => {
      const expiring = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const ref = claimed(await store.claim(input(fresh('old'), { retentionMs: 300 })));
          await store.complete(ref, 'COMPLETED', { status: 200, headers: {}, body: body('old') }, 300);
          return ref.key;
        }),
      );
      // In flight past its retention: the lease is live, so nothing may delete it.
      const inFlight = await Promise.all(
        Array.from(
          { length: 5 },
          async () => claimed(await store.claim(input(fresh('busy'), { retentionMs: 300 }))).key,
        ),
      );
      const kept: string[] = [];
      let stop = false;
      const traffic = (async () => {
        while (!stop) {
          const ref = claimed(await store.claim(input(fresh('live'))));
          await store.complete(ref, 'COMPLETED', { status: 201, headers: {}, body: body('live') }, 60_000);
          kept.push(ref.key);
          // Requests arrive as I/O: let timers and other callbacks run between them, as a server would.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      try {
        await until(async () => {
          await subject.cleanup?.();
          const left = await Promise.all(expiring.map((key) => store.read(SCOPE, key)));
          return left.every((record) => record === undefined);
        });
      } finally {
        stop = true;
        await traffic;
      }
      expect(kept.length).toBeGreaterThan(0);
      for (const key of kept) expect((await store.read(SCOPE, key))?.status).toBe('COMPLETED');
      for (const key of inFlight) expect((await store.read(SCOPE, key))?.leaseLive).toBe(true);
    });

    it('store outage: every call fails closed with StoreUnavailableError', async () => {
      const down = await subject.unavailable();
      const ref: ClaimRef = { scope: SCOPE, key: fresh('down'), token: '1', action: 'contractAction' };
      await expect(down.claim(input(ref.key))).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(down.read(SCOPE, ref.key)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(
        down.complete(ref, 'COMPLETED', { status: 200, headers: {}, body: body('x') }, 1_000),
      ).rejects.toBeInstanceOf(StoreUnavailableError);
      if (down.claimInTransaction)
        await expect(down.claimInTransaction(input(ref.key))).rejects.toBeInstanceOf(StoreUnavailableError);
    });

    it('transactional mode (stores that offer it): commit records, rollback leaves no trace, duplicates never claim', async () => {
      if (!store.claimInTransaction) return;
      const key = fresh('tx');
      const open = await store.claimInTransaction(input(key));
      if (open.outcome !== 'claimed') throw new Error('expected a transactional claim');
      expect(open.transaction.db).toBeDefined();
      expect(Number.isInteger(open.startedAt)).toBe(true);
      // While the transaction is open a duplicate waits, then sees it in flight or fails closed: never a claim.
      const duplicate = await store.claim(input(key)).catch((error: unknown) => error);
      if (duplicate instanceof Error) expect(duplicate).toBeInstanceOf(StoreUnavailableError);
      else expect((duplicate as ClaimResult).outcome).toBe('existing');
      await open.transaction.commit('COMPLETED', { status: 201, headers: {}, body: body('tx') }, 60_000);
      const replay = await store.claim(input(key));
      expect(replay.outcome === 'existing' && replay.record.response?.body.toString()).toBe('tx');

      const undone = fresh('tx-rollback');
      const rolled = await store.claimInTransaction(input(undone));
      if (rolled.outcome !== 'claimed') throw new Error('expected a transactional claim');
      await rolled.transaction.rollback();
      expect(await store.read(SCOPE, undone)).toBeUndefined();
      const retry = await store.claim(input(undone));
      expect(retry.outcome === 'claimed' && retry.attempt).toBe(1);

      // A transactional takeover of a lapsed lease keeps the record's startedAt, as a lease-mode one does.
      const lapsing = fresh('tx-started');
      const leased = await store.claim(input(lapsing, { leaseMs: 200 }));
      if (leased.outcome !== 'claimed') throw new Error('expected a claim');
      await until(async () => (await store.read(SCOPE, lapsing))?.leaseLive === false);
      const takeover = await store.claimInTransaction(input(lapsing));
      if (takeover.outcome !== 'claimed') throw new Error('expected a transactional takeover');
      expect(takeover.attempt).toBe(2);
      expect(takeover.startedAt).toBe(leased.startedAt);
      await takeover.transaction.rollback();
    });
  });
}

/** Polls a condition on the store's state (never a fixed sleep as synchronisation), failing after a generous bound. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + STATE_WAIT_MS;
  for (let wait = 20; ; wait = Math.min(wait * 2, 200)) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error('the store did not reach the expected state in time');
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
