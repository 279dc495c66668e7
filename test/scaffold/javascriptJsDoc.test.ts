import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import type { ModuleType } from '../../src/scaffold/index.js';
import { ROOT } from './generateInto.js';
import { SCAFFOLD_DIR } from './javascriptProject.js';

const run = promisify(execFile);

const STACKS: ReadonlyArray<{ framework: string; database: string }> = [
  { framework: 'express', database: 'postgres' },
  { framework: 'express', database: 'sqlite' },
  { framework: 'koa', database: 'redis' },
];

/**
 * The JavaScript scaffold carries its types as JSDoc: the runtime files of several stacks, in each module format,
 * pass `tsc --allowJs --checkJs --strict` as a JavaScript user's editor checks them (one tsc run per format). The
 * suites (and store-contract.js, which they import) are ES modules even in a CommonJS project, so only the ES
 * module profile could check them; they are left out of both for now.
 */
describe.each<{ moduleType: ModuleType; module: string; moduleResolution: string }>([
  { moduleType: 'commonjs', module: 'commonjs', moduleResolution: 'node10' },
  { moduleType: 'module', module: 'nodenext', moduleResolution: 'nodenext' },
])('JavaScript ($moduleType) scaffold with JSDoc types', ({ moduleType, module, moduleResolution }) => {
  let root = '';
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('passes tsc --checkJs --strict on express+postgres, express+sqlite and koa+redis', { timeout: 300_000 }, async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    root = await mkdtemp(path.join(ROOT, '.tmp', `jsdoc-${moduleType}-`));
    const base = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete base['$schema'];
    for (const { framework, database } of STACKS) {
      const dir = path.join(root, `${framework}-${database}`);
      await mkdir(dir);
      await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, ...(moduleType === 'module' ? { type: 'module' } : {}) }));
      const config = structuredClone(base);
      Object.assign(config.stack as Record<string, unknown>, { framework, database });
      await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
      const result = await generate({ cwd: dir, date: '2026-01-15' });
      expect(result.warnings).toEqual([]);
    }
    const core = await readFile(path.join(root, 'express-postgres', SCAFFOLD_DIR, 'core.js'), 'utf8');
    expect(core).toMatch(/@typedef \{object\} \w+/);
    expect(core).toMatch(/@param \{import\('\.\/types\.js'\)\.\w+\} \w+/);

    const tsconfig = {
      compilerOptions: { allowJs: true, checkJs: true, noEmit: true, strict: true, module, moduleResolution, target: 'es2022', skipLibCheck: true, types: ['node'] },
      include: STACKS.map(({ framework, database }) => `${framework}-${database}/${SCAFFOLD_DIR}/**/*.js`),
      exclude: ['**/*.test.js', '**/store-contract.js'],
    };
    await writeFile(path.join(root, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const output = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || String(error),
    );
    expect(output).toBe('');
  });
});
