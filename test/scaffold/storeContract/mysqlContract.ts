import { runStoreContract } from './contract.js';
import type { Materialized } from './materialize.js';
import { createMysqlDatabase } from './services.js';

/** The contract suite on a materialized MySQL store, in a database of its own named after `database`. */
export async function runMysqlContract(scaffold: Materialized, label: string, database: string): Promise<void> {
  const { MysqlIdempotencyStore } = await scaffold.load('mysqlStore');
  const { createPool } = await scaffold.load('pool');
  const { deleteExpiredKeys } = await scaffold.load('cleanup');
  await runStoreContract(scaffold, label, async () => {
    const { table, stepTable } = scaffold.view.policy;
    const created = await createMysqlDatabase(database, scaffold.migration!);
    const pool = createPool(created.url, { acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 }, 20);
    const options = { table, stepTable, timeoutMs: 5_000, lockTimeoutMs: 1_000 };
    // Nothing listens on port 1: every call must fail closed.
    const down = createPool('mysql://root@127.0.0.1:1/test', { acquireTimeoutMs: 500, statementTimeoutMs: 500 });
    return {
      store: new MysqlIdempotencyStore({ pool, ...options }),
      unavailable: async () => new MysqlIdempotencyStore({ pool: down, ...options, timeoutMs: 500 }),
      cleanup: async () => (await deleteExpiredKeys({ pool, table, batchSize: 10 })).deleted,
      close: async () => {
        await pool.end();
        await down.end();
        await created.drop();
      },
    };
  });
}
