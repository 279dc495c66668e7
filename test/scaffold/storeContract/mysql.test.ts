import { afterAll, describe, it } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';
import { createMysqlDatabase, mysqlSkipReason } from './services.js';

const skip = await mysqlSkipReason();
if (skip) {
  console.warn(`store contract against MySQL/MariaDB skipped: ${skip}`);
  describe.skip('store contract: MySQL/MariaDB', () => it('needs MariaDB', () => undefined));
} else {
  const scaffold = await materializeStore('mysql');
  afterAll(() => scaffold.remove());
  const { MysqlIdempotencyStore } = await scaffold.load('mysqlStore');
  const { createPool } = await scaffold.load('pool');
  const { deleteExpiredKeys } = await scaffold.load('cleanup');
  await runStoreContract(scaffold, 'MySQL/MariaDB (mysql2)', async () => {
    const { table, stepTable } = scaffold.view.policy;
    const database = await createMysqlDatabase('contract', scaffold.migration!);
    const pool = createPool(database.url, { acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 }, 20);
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
        await database.drop();
      },
    };
  });
}
