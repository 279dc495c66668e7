import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';

// Embedded: no server to be away, so this suite always runs.
const scaffold = await materializeStore('sqlite');
afterAll(() => scaffold.remove());
const { SqliteIdempotencyStore } = await scaffold.load('sqliteStore');
const { createPool } = await scaffold.load('pool');
const { deleteExpiredKeys } = await scaffold.load('cleanup');
await runStoreContract(scaffold, 'SQLite (better-sqlite3)', async () => {
  const { table, stepTable } = scaffold.view.policy;
  const dir = await mkdtemp(path.join(tmpdir(), 'idem-sqlite-'));
  const pool = createPool(path.join(dir, 'store.db'));
  pool.db.exec(scaffold.migration!);
  const options = { table, stepTable, timeoutMs: 5_000 };
  return {
    store: new SqliteIdempotencyStore({ pool, ...options }),
    unavailable: async () => {
      // A database whose connections are gone (the file's volume vanished, the app is shutting down).
      const closed = createPool(path.join(dir, 'closed.db'));
      closed.end();
      return new SqliteIdempotencyStore({ pool: closed, ...options, timeoutMs: 200 });
    },
    cleanup: async () => (await deleteExpiredKeys({ pool, table, batchSize: 10 })).deleted,
    close: async () => {
      pool.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
