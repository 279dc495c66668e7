import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryStore } from '../../templates/scaffold/typescript/core/memoryStore.js';
import type { ClaimInput, ClaimRef, ClaimResult } from '../../templates/scaffold/typescript/core/types.js';

/**
 * What the store contract (storeContract/memory.test.ts) does not reach: reconciliation's stuck list, memory that
 * stays bounded without a cleanup job, and stored responses that callers cannot change. The clock is Vitest's
 * (the store reads Date.now()), so time moves without waiting.
 */
const T0 = new Date('2026-01-15T00:00:00Z').getTime();
const input = (key: string, overrides: Partial<ClaimInput> = {}): ClaimInput => ({
  scope: 'user-1',
  key,
  action: 'createPayment',
  fingerprint: 'a'.repeat(64),
  algorithm: 'sha256-canonical-json-v1',
  leaseMs: 1_000,
  retentionMs: 60_000,
  ...overrides,
});
const claimed = (result: ClaimResult): ClaimRef => {
  if (result.outcome !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
  return result.ref;
};
const response = (text: string) => ({ status: 201, headers: { 'content-type': 'text/plain' }, body: Buffer.from(text) });

describe('in-memory store', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists lapsed claims nobody gave back, oldest lease first, at least minStuckMs old', async () => {
    const store = createMemoryStore();
    const older = claimed(await store.claim(input('older', { leaseMs: 1_000 })));
    const newer = claimed(await store.claim(input('newer', { leaseMs: 2_000 })));
    await store.release(claimed(await store.claim(input('released'))));
    await store.complete(claimed(await store.claim(input('finished'))), 'COMPLETED', response('done'), 60_000);
    claimed(await store.claim(input('live', { leaseMs: 600_000 })));
    expect(await store.listStuck({ limit: 10 })).toEqual([]);

    vi.setSystemTime(T0 + 5_000);
    const stuck = await store.listStuck({ limit: 10 });
    expect(stuck.map((record) => [record.key, record.stuckForMs])).toEqual([
      [older.key, 4_000],
      [newer.key, 3_000],
    ]);
    expect(stuck[0]).toMatchObject({ scope: 'user-1', action: 'createPayment', fingerprint: 'a'.repeat(64), attempts: 1 });
    expect((await store.listStuck({ limit: 10, minStuckMs: 3_500 })).map((record) => record.key)).toEqual([older.key]);
    expect((await store.listStuck({ limit: 1 })).map((record) => record.key)).toEqual([older.key]);
    // Taken over, it is in flight again.
    claimed(await store.claim(input(older.key)));
    expect((await store.listStuck({ limit: 10 })).map((record) => record.key)).toEqual([newer.key]);
  });

  it('drops expired records without a cleanup job: on lookup, and every few seconds on a claim', async () => {
    const store = createMemoryStore();
    for (let i = 0; i < 50; i++) {
      await store.complete(claimed(await store.claim(input(`old-${i}`, { retentionMs: 500 }))), 'COMPLETED', response('old'), 500);
    }
    // In flight past its retention: its live lease keeps it.
    const busy = claimed(await store.claim(input('busy', { leaseMs: 600_000, retentionMs: 500 })));
    vi.setSystemTime(T0 + 60_000);
    expect(await store.read('user-1', 'old-0')).toBeUndefined();
    // The next claim walks the records: nothing expired is left for an explicit sweep to find.
    claimed(await store.claim(input('new')));
    expect(store.deleteExpired()).toBe(0);
    expect((await store.read('user-1', busy.key))?.leaseLive).toBe(true);
    for (let i = 1; i < 50; i++) expect(await store.read('user-1', `old-${i}`)).toBeUndefined();
  });

  it('replays the bytes it was given, whatever the caller does with its buffer and headers afterwards', async () => {
    const store = createMemoryStore();
    const ref = claimed(await store.claim(input('bytes')));
    const given = response('original');
    await store.complete(ref, 'COMPLETED', given, 60_000);
    given.body.write('XXXXXXXX');
    given.headers['content-type'] = 'application/json';
    const first = await store.read('user-1', 'bytes');
    first?.response?.body.write('YYYYYYYY');
    const replay = await store.claim(input('bytes'));
    if (replay.outcome !== 'existing') throw new Error('a finished key was claimed again');
    expect(replay.record.response?.body.toString()).toBe('original');
    expect(replay.record.response?.headers).toEqual({ 'content-type': 'text/plain' });
  });

  it('keeps principals apart and fails closed once closed', async () => {
    const store = createMemoryStore();
    claimed(await store.claim(input('shared-key', { scope: 'user-1' })));
    // The same key from another principal is that principal's own new key.
    expect((await store.claim(input('shared-key', { scope: 'user-2' }))).outcome).toBe('claimed');
    store.close();
    await expect(store.read('user-1', 'shared-key')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    await expect(store.claim(input('after-close'))).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  });
});
