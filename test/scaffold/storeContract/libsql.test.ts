import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';

// A local file through @libsql/client: the same client, statements and write batches a remote libSQL server gets,
// with no server to be away, so this suite always runs.
const scaffold = await materializeStore('libsql');
afterAll(() => scaffold.remove());
const { LibsqlIdempotencyStore } = await scaffold.load('libsqlStore');
const { createPool } = await scaffold.load('pool');
const { deleteExpiredKeys } = await scaffold.load('cleanup');
const { StoreUnavailableError } = await scaffold.load('types');
await runStoreContract(scaffold, 'libSQL (@libsql/client, file)', async () => {
  const { table, stepTable } = scaffold.view.policy;
  const dir = await mkdtemp(path.join(tmpdir(), 'idem-libsql-'));
  const pool = createPool(`file:${path.join(dir, 'store.db')}`);
  await pool.executeMultiple(scaffold.migration!);
  const options = { table, stepTable, timeoutMs: 5_000 };
  return {
    store: new LibsqlIdempotencyStore({ pool, ...options }),
    unavailable: async () => {
      // A client that was closed (the app is shutting down): every call must fail closed.
      const closed = createPool(`file:${path.join(dir, 'closed.db')}`);
      closed.close();
      return new LibsqlIdempotencyStore({ pool: closed, ...options, timeoutMs: 200 });
    },
    cleanup: async () => (await deleteExpiredKeys({ pool, table, stepTable, batchSize: 10 })).deleted,
    close: async () => {
      pool.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// A local file has one writer: another process's open write transaction makes the claim's batch answer SQLITE_BUSY.
// The store waits for the lock without blocking the event loop, within its bound, and then fails closed. (Whether it
// then claims once the lock is free is not asserted: @libsql/client 0.18 leaves a connection that met SQLITE_BUSY
// unable to commit a later batch until the failed statement is garbage-collected, so that claim may fail closed too.)
describe('libSQL store on a file another process is writing to', () => {
  const input = (key: string) => ({ scope: 'user-a', key, action: 'createTask', fingerprint: 'f'.repeat(64), algorithm: 'sha256-v1', leaseMs: 60_000, retentionMs: 3_600_000 });

  async function openShared() {
    const { table, stepTable } = scaffold.view.policy;
    const dir = await mkdtemp(path.join(tmpdir(), 'idem-libsql-busy-'));
    const url = `file:${path.join(dir, 'store.db')}`;
    const pool = createPool(url);
    await pool.executeMultiple(scaffold.migration!);
    // The other process: a client of its own on the same file.
    const other = createPool(url);
    await other.execute('CREATE TABLE other_work (id INTEGER)');
    return {
      other,
      store: (timeoutMs: number) => new LibsqlIdempotencyStore({ pool, table, stepTable, timeoutMs }),
      close: async () => {
        pool.close();
        other.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }

  it('a lock held past the store bound fails the claim closed, and nothing was claimed', async () => {
    const shared = await openShared();
    try {
      const writer = await shared.other.transaction('write');
      await writer.execute('INSERT INTO other_work (id) VALUES (1)');
      await expect(shared.store(300).claim(input('held'))).rejects.toBeInstanceOf(StoreUnavailableError);
      await writer.rollback();
      expect(await shared.store(5_000).read('user-a', 'held')).toBeUndefined();
    } finally {
      await shared.close();
    }
  });
});
