import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import type { ModuleType } from '../../src/scaffold/index.js';
import { ROOT } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';
import { run, SCAFFOLD_DIR } from './javascriptProject.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`JavaScript scaffolds of the new adapters against PostgreSQL skipped: ${skip}`);

/** Each new adapter once in a plain JavaScript project, the two module formats shared between them. */
const CASES: ReadonlyArray<{ framework: string; module: string; moduleType: ModuleType }> = [
  { framework: 'koa', module: 'koa', moduleType: 'commonjs' },
  { framework: 'hono', module: 'hono', moduleType: 'module' },
  { framework: 'nextjs', module: 'next', moduleType: 'module' },
  { framework: 'none', module: 'plain', moduleType: 'commonjs' },
];

describe.each(CASES)('JavaScript ($moduleType) project on $framework + PostgreSQL', ({ framework, module, moduleType }) => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generate writes JavaScript only, every file passes node --check, and the generated suite passes', async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', `js-${framework}-`));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, ...(moduleType === 'module' ? { type: 'module' } : {}) }));
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete config['$schema'];
    (config.stack as Record<string, unknown>).framework = framework;
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
    await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.js'], testTimeout: 30000 } };\n");

    const result = await generate({ cwd: dir, date: '2026-01-15' });
    expect(result.warnings).toEqual([]);
    const files = await readdir(path.join(dir, SCAFFOLD_DIR));
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    expect(files).toContain(`${module}.js`);
    const adapter = await readFile(path.join(dir, SCAFFOLD_DIR, `${module}.js`), 'utf8');
    if (moduleType === 'commonjs') expect(adapter).not.toMatch(/^(import|export) /m);
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      await run(process.execPath, ['--check', `${SCAFFOLD_DIR}/${file}`], { cwd: dir }).catch((error: { stderr?: string }) => {
        throw new Error(`node --check ${file} failed:\n${error.stderr ?? String(error)}`);
      });
    }
    if (skip) return;
    await runGeneratedSuite(dir);
  });
});
