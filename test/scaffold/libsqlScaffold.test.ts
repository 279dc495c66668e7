import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateScaffold } from '../../src/scaffold/index.js';
import { findTarget } from '../../src/scaffold/registry.js';
import { modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);

// A lease-mode design (Stripe) and one whose action would be transactional on a store that offers it: libSQL runs
// both in lease mode. Express and Fastify run their generated suites and the store contract; Hono and the plain
// wrapper (the trial's stack, and the one without a framework) run theirs too.
const CASES = [
  { framework: 'express', fixture: 'express-stripe-payments' },
  { framework: 'fastify', fixture: 'minimal-one-action' },
  { framework: 'hono', fixture: 'minimal-one-action' },
  { framework: 'none', fixture: 'express-stripe-payments' },
] as const;
const label = (framework: string) => `${framework === 'none' ? 'plain' : framework}-libsql`;

/** The libSQL scaffold on several adapters: tsc --strict, then its own generated suites on a local file: database. */
describe('libSQL scaffold', () => {
  let dir = '';
  beforeAll(async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'libsql-scaffold-'));
    for (const { framework, fixture } of CASES) {
      const model = await modelFor(fixture, (raw) => {
        Object.assign(raw.stack as Record<string, unknown>, { framework, database: 'libsql', language: 'typescript', testFramework: 'vitest' });
      });
      for (const file of generateScaffold(model, { dir: `${label(framework)}/src/idempotency` })) {
        await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
        await writeFile(path.join(dir, file.path), file.contents);
      }
    }
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      noUnusedLocals: true,
      noUnusedParameters: true,
      isolatedModules: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*/src'] }, null, 2));
    await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['*/src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 30000 } };\n");
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(CASES)('$framework has a libSQL target of its own, in lease mode', async ({ framework, fixture }) => {
    const model = await modelFor(fixture, (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework, database: 'libsql' }));
    expect(findTarget(model.stack)?.id).toBe(`typescript-${framework === 'none' ? 'plain' : framework}-libsql`);
    expect(model.actions.every((action) => action.mode === 'lease')).toBe(true);
  });

  it('every combination compiles with tsc --strict', { timeout: 600_000 }, async () => {
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const errors = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    expect(errors).toBe('');
  });

  it('the generated suites and the store contract pass', { timeout: 600_000 }, async () => {
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const { stdout } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose'], {
      cwd: dir,
      env: { ...process.env, CI: '1', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `generated suites failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}` }));
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/\d+ (failed|skipped)/);
    for (const { framework } of CASES) expect(stdout).toContain(`${label(framework)}/src/idempotency/idempotency.test.ts`);
    expect(stdout).toContain(`${label('express')}/src/idempotency/store-contract.test.ts`);
  });
});
