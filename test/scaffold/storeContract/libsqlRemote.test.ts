import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runStoreContract } from './contract.js';
import { startHranaServer } from './hranaServer.js';
import { materializeStore } from './materialize.js';

// The libSQL store's remote path: @libsql/client on an http:// URL speaks Hrana over HTTP, as to Turso or sqld. Every
// call is then a network round trip (numbers travel as floats, the claim's batch carries its own BEGIN and COMMIT),
// which the file: suite never exercises.
const scaffold = await materializeStore('libsql');
afterAll(() => scaffold.remove());
const { LibsqlIdempotencyStore } = await scaffold.load('libsqlStore');
const { createPool } = await scaffold.load('pool');
const { deleteExpiredKeys } = await scaffold.load('cleanup');
const { StoreUnavailableError } = await scaffold.load('types');
const { table, stepTable } = scaffold.view.policy;

async function openRemote(timeoutMs: number) {
  const dir = await mkdtemp(path.join(tmpdir(), 'idem-libsql-remote-'));
  const server = await startHranaServer(path.join(dir, 'store.db'));
  const pool = createPool(server.url, undefined, undefined, '');
  await pool.executeMultiple(scaffold.migration!);
  return {
    pool,
    server,
    store: new LibsqlIdempotencyStore({ pool, table, stepTable, timeoutMs }),
    close: async () => {
      pool.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

await runStoreContract(scaffold, 'libSQL (@libsql/client over HTTP)', async () => {
  const remote = await openRemote(5_000);
  return {
    store: remote.store,
    // Nothing listens on port 1: every call must fail closed.
    unavailable: async () => new LibsqlIdempotencyStore({ pool: createPool('http://127.0.0.1:1', undefined, undefined, ''), table, stepTable, timeoutMs: 200 }),
    cleanup: async () => (await deleteExpiredKeys({ pool: remote.pool, table, stepTable, batchSize: 10 })).deleted,
    close: remote.close,
  };
});

const input = (key: string) => ({ scope: 'user-a', key, action: 'createTask', fingerprint: 'f'.repeat(64), algorithm: 'sha256-v1', leaseMs: 60_000, retentionMs: 3_600_000 });
const isClaim = (sqls: readonly string[]) => sqls.some((sql) => sql.includes('ON CONFLICT (scope, key) DO UPDATE'));

describe('libSQL store over the network: a claim the store gave up on takes nothing', () => {
  it('a claim answered after the time-out is released at once, so the retry claims without waiting for the lease', { timeout: 60_000 }, async () => {
    const remote = await openRemote(2_000);
    try {
      // The first claim of a store reads the database clock; later ones carry a deadline on it.
      expect(await remote.store.claim(input('warm-up'))).toMatchObject({ outcome: 'claimed' });
      let answer = () => {};
      const held = new Promise<void>((resolve) => (answer = resolve));
      remote.server.hold = (sqls) => (isClaim(sqls) ? { after: held } : undefined);
      await expect(remote.store.claim(input('late-answer'))).rejects.toBeInstanceOf(StoreUnavailableError);
      remote.server.hold = () => undefined;
      const released = remote.server.ran(/released_at = /);
      answer();
      await released;
      expect(await remote.store.read('user-a', 'late-answer')).toMatchObject({ status: 'PROCESSING', leaseLive: false });
      expect(await remote.store.claim(input('late-answer'))).toMatchObject({ outcome: 'claimed', reclaimed: 'released' });
    } finally {
      await remote.close();
    }
  });

  it('a claim that reaches the server after its deadline inserts nothing', { timeout: 60_000 }, async () => {
    const remote = await openRemote(2_000);
    try {
      expect(await remote.store.claim(input('warm-up'))).toMatchObject({ outcome: 'claimed' });
      let deliver = () => {};
      const held = new Promise<void>((resolve) => (deliver = resolve));
      remote.server.hold = (sqls) => (isClaim(sqls) ? { before: held } : undefined);
      await expect(remote.store.claim(input('late-request'))).rejects.toBeInstanceOf(StoreUnavailableError);
      remote.server.hold = () => undefined;
      const ran = remote.server.ran(/ON CONFLICT \(scope, key\) DO UPDATE/);
      deliver();
      await ran;
      expect(await remote.store.read('user-a', 'late-request')).toBeUndefined();
      expect(await remote.store.claim(input('late-request'))).toMatchObject({ outcome: 'claimed', reclaimed: 'no', attempt: 1 });
    } finally {
      await remote.close();
    }
  });
});
