import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { DATABASE_URL, postgresSkipReason } from '../harness.js';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';
import { throwaway } from './services.js';

const skip = await postgresSkipReason();
if (skip) {
  console.warn(`store contract against PostgreSQL skipped: ${skip}`);
  describe.skip('store contract: PostgreSQL', () => it('needs PostgreSQL', () => undefined));
} else {
  const scaffold = await materializeStore('postgres');
  afterAll(() => scaffold.remove());
  const { PgIdempotencyStore } = await scaffold.load('pgStore');
  const { createPool } = await scaffold.load('pool');
  const { deleteExpiredKeys } = await scaffold.load('cleanup');
  await runStoreContract(scaffold, 'PostgreSQL (pg)', async () => {
    const { table, stepTable } = scaffold.view.policy;
    const schema = throwaway('contract');
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const pool = createPool(url, { acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 }, 20);
    await pool.query(scaffold.migration!);
    const options = { table, stepTable, timeoutMs: 5_000 };
    const down = createPool('postgres://postgres@127.0.0.1:1/test', { acquireTimeoutMs: 500, statementTimeoutMs: 500 });
    return {
      store: new PgIdempotencyStore({ pool, ...options }),
      unavailable: async () => new PgIdempotencyStore({ pool: down, ...options, timeoutMs: 500 }),
      cleanup: async () => (await deleteExpiredKeys({ pool, table, batchSize: 10 })).deleted,
      close: async () => {
        await pool.end();
        await down.end();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      },
    };
  });
}
