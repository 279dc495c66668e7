import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../generateInto.js';
import { materializeStore } from './materialize.js';
import { runMysqlContract } from './mysqlContract.js';
import { mysqlSkipReason } from './services.js';

/**
 * The MySQL store on mysql2 2.3, the release the install hint pins for TypeScript before 5 (TypeORM 0.2 projects
 * declare mysql2 ^2.2.5): the contract suite against MariaDB with the generated files loading mysql2 2.3.3 (the
 * `mysql2-2.3` devDependency alias), not today's 3.x. oldTypings.test.ts only type-checks against it.
 */
const skip = await mysqlSkipReason();
if (skip) {
  console.warn(`store contract against MySQL/MariaDB on mysql2 2.3 skipped: ${skip}`);
  describe.skip('store contract: MySQL/MariaDB on mysql2 2.3', () => it('needs MariaDB', () => undefined));
} else {
  const scaffold = await materializeStore('mysql', { mysql2: 'mysql2-2.3' });
  afterAll(() => scaffold.remove());

  describe('the scaffold of the mysql2 2.3 contract run', () => {
    it('resolves mysql2/promise to the 2.3.3 release', async () => {
      const resolved = createRequire(path.join(scaffold.dir, 'pool.ts')).resolve('mysql2/promise');
      expect(resolved).toContain(`${path.sep}node_modules${path.sep}mysql2-2.3${path.sep}`);
      const manifest = JSON.parse(await readFile(path.join(ROOT, 'node_modules/mysql2-2.3/package.json'), 'utf8')) as { version: string };
      expect(manifest.version).toBe('2.3.3');
    });
  });

  await runMysqlContract(scaffold, 'MySQL/MariaDB (mysql2 2.3)', 'contract23');
}
