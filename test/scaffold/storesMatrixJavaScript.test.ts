import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import type { ModuleType } from '../../src/scaffold/index.js';
import { ROOT } from './generateInto.js';
import { SCAFFOLD_DIR } from './javascriptProject.js';
import { REDIS_URL, redisSkipReason, startDynalite } from './storeContract/services.js';
import { runGeneratedSuite } from './harness.js';

const run = promisify(execFile);
const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`JavaScript scaffold on Redis: generated suite skipped: ${redisSkip}`);

/**
 * JavaScript projects on the stores besides PostgreSQL: the same files with the types stripped, in each module format.
 * One generate and one run of the generated suites per combination.
 */
const CASES: ReadonlyArray<{ framework: string; database: string; module: string; moduleType: ModuleType }> = [
  { framework: 'koa', database: 'sqlite', module: 'koa', moduleType: 'commonjs' },
  { framework: 'express', database: 'redis', module: 'express', moduleType: 'module' },
  { framework: 'nextjs', database: 'dynamodb', module: 'next', moduleType: 'module' },
  { framework: 'hono', database: 'libsql', module: 'hono', moduleType: 'commonjs' },
];

describe.each(CASES)('JavaScript ($moduleType) project on $framework + $database', ({ framework, database, module, moduleType }) => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generate writes JavaScript only, every file passes node --check, and the generated suites pass', { timeout: 300_000 }, async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', `js-${framework}-${database}-`));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, ...(moduleType === 'module' ? { type: 'module' } : {}) }));
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete config['$schema'];
    Object.assign(config.stack as Record<string, unknown>, { framework, database, testFramework: 'vitest' });
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
    await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.js'], testTimeout: 30000, hookTimeout: 30000 } };\n");

    const result = await generate({ cwd: dir, date: '2026-01-15' });
    expect(result.warnings).toEqual([]);
    const files = await readdir(path.join(dir, SCAFFOLD_DIR));
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    expect(files).toContain(`${module}.js`);
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      await run(process.execPath, ['--check', `${SCAFFOLD_DIR}/${file}`], { cwd: dir }).catch((error: { stderr?: string }) => {
        throw new Error(`node --check ${file} failed:\n${error.stderr ?? String(error)}`);
      });
    }
    if (database === 'redis' && redisSkip) return;
    const dynamo = database === 'dynamodb' ? await startDynalite() : undefined;
    try {
      const stdout = await runGeneratedSuite(dir, { env: { REDIS_URL, ...(dynamo ? { DYNAMODB_ENDPOINT: dynamo.endpoint } : {}) } });
      expect(stdout).not.toMatch(/\d+ failed|skipped/);
      expect(stdout).toContain('store-contract.test.js');
    } finally {
      await dynamo?.close();
    }
  });
});
