import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);

/**
 * create-next-app's tsconfig before Next 13.5 (still in many live apps, e.g. vercel/nextjs-subscription-payments):
 * target ES5 with lib esnext and no downlevelIteration. Spreading or for-of over a Map, Set or `entries()` does not
 * compile there (TS2802), so the scaffold must only iterate arrays.
 */
const LEGACY_NEXT_OPTIONS = {
  target: 'es5',
  lib: ['dom', 'dom.iterable', 'esnext'],
  allowJs: true,
  skipLibCheck: true,
  strict: true,
  noEmit: true,
  esModuleInterop: true,
  module: 'esnext',
  moduleResolution: 'node',
  resolveJsonModule: true,
  isolatedModules: true,
  jsx: 'preserve',
};

/**
 * Three designs keep it to one moderate tsc run: both saga templates (the PostgreSQL one and the shared one the other
 * stores use), Next.js route handlers, and the marketplace's consumers, crons and webhooks.
 */
const VARIANTS: Array<{ label: string; fixture: string; stack?: Record<string, string> }> = [
  { label: 'next-postgres', fixture: 'express-stripe-payments', stack: { framework: 'nextjs' } },
  { label: 'express-mysql', fixture: 'express-stripe-payments', stack: { database: 'mysql' } },
  { label: 'marketplace', fixture: 'large-marketplace' },
];

describe('a project compiled for ES5 (old create-next-app tsconfig)', () => {
  let dir = '';
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });

  it('compiles every scaffold under its tsconfig with one tsc run', { timeout: 240_000 }, async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'profile-legacy-es5-'));
    const tsconfig = { compilerOptions: { ...LEGACY_NEXT_OPTIONS, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')] }, include: ['**/*.ts'] };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true }));

    for (const variant of VARIANTS) {
      const scaffoldDir = `${variant.label}/idempotency`;
      const profile = await readProjectProfile({ root: dir, dir: scaffoldDir, language: 'typescript', testFramework: 'vitest' });
      expect(profile).toMatchObject({ moduleSystem: 'esm', relativeImports: 'extensionless', esLibrary: 2099 });
      const model = await modelFor(variant.fixture, (raw) => {
        Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', ...variant.stack });
      });
      for (const file of generateScaffold(model, { dir: scaffoldDir, profile })) {
        await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
        await writeFile(path.join(dir, file.path), file.contents);
      }
    }

    const compiled = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout),
    );
    expect(compiled).toBe('');
  });
});
