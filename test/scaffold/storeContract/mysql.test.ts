import { afterAll, describe, it } from 'vitest';
import { materializeStore } from './materialize.js';
import { runMysqlContract } from './mysqlContract.js';
import { mysqlSkipReason } from './services.js';

const skip = await mysqlSkipReason();
if (skip) {
  console.warn(`store contract against MySQL/MariaDB skipped: ${skip}`);
  describe.skip('store contract: MySQL/MariaDB', () => it('needs MariaDB', () => undefined));
} else {
  const scaffold = await materializeStore('mysql');
  afterAll(() => scaffold.remove());
  await runMysqlContract(scaffold, 'MySQL/MariaDB (mysql2)', 'contract');
}
