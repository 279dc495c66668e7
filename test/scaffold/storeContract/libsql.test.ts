import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';

// A local file through @libsql/client: the same client, statements and write batches a remote libSQL server gets,
// with no server to be away, so this suite always runs.
const scaffold = await materializeStore('libsql');
afterAll(() => scaffold.remove());
const { LibsqlIdempotencyStore } = await scaffold.load('libsqlStore');
const { createPool } = await scaffold.load('pool');
const { deleteExpiredKeys } = await scaffold.load('cleanup');
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
