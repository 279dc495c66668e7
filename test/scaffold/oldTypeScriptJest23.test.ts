import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile, scaffoldProject } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { installIntoCache, writeAndTypeCheck } from './npmCache.js';

const run = promisify(execFile);

/**
 * A 2019 TypeScript project (w3tecch/express-typescript-boilerplate, issue #15): TypeScript 3.6 upgraded to 3.9 as
 * generate tells it to, Jest 23 with ts-jest 23.10 (which type-checks every suite with the project's tsconfig),
 * @types/jest 23, @types/node 14 and a tsconfig with noUnusedLocals, noImplicitReturns, importHelpers (tslib) and
 * no skipLibCheck. The generated suites must compile with that tsconfig and pass under that Jest against
 * PostgreSQL. The toolchain is installed once into a scratch folder (this repository's node_modules hold today's);
 * the project lives under it so that it resolves there.
 */
const TYPESCRIPT = '3.9.10';
const JEST = '23.6.0';
const PACKAGES = {
  typescript: TYPESCRIPT,
  jest: JEST,
  'ts-jest': '23.10.5',
  '@types/jest': '23.3.14',
  '@types/node': '14.18.63',
  express: '4.17.3',
  tslib: '1.14.1',
  // What the dependency hint adds (checked below against what it says), at releases of today.
  pg: '8.23.1',
  '@types/pg': '8.23.1',
  'pg-protocol': '1.14.0',
  '@types/express': '4.17.13',
  '@types/express-serve-static-core': '4.17.28',
  'prom-client': '14.2.0',
};
/** The boilerplate's package.json before generate (TypeScript upgraded to 3.9 as the hint says). */
const MANIFEST = {
  private: true,
  name: 'express-typescript-boilerplate',
  scripts: { test: 'jest' },
  dependencies: { express: '^4.16.4', tslib: '^1.10.0' },
  devDependencies: { typescript: TYPESCRIPT, jest: JEST, 'ts-jest': '^23.10.5', '@types/jest': '^23.3.14', '@types/node': '^14.18.63' },
};
const CACHE = path.join(os.tmpdir(), `idempotency-builder-typescript${TYPESCRIPT}-jest${JEST}`);

/** The boilerplate's tsconfig, as it has it (only `include` narrowed to the sources). */
const TSCONFIG = {
  compilerOptions: {
    module: 'commonjs',
    target: 'es6',
    lib: ['es6', 'dom'],
    moduleResolution: 'node',
    strict: true,
    strictNullChecks: false,
    noImplicitAny: false,
    noUnusedLocals: true,
    noImplicitReturns: true,
    importHelpers: true,
    esModuleInterop: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    sourceMap: true,
    outDir: 'dist',
  },
  include: ['src/**/*'],
};

/** Its Jest config with ts-jest as the transform (the boilerplate's own preprocessor calls tsc the same way). */
const JEST_CONFIG = {
  transform: { '.(ts|tsx)': 'ts-jest' },
  testRegex: '/src/.*\\.(test|spec)\\.(ts|tsx|js)$',
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json'],
  testEnvironment: 'node',
};

const install = await installIntoCache(CACHE, PACKAGES);
if (install) console.warn(`TypeScript ${TYPESCRIPT} + Jest ${JEST} suite skipped: ${install}`);
const postgres = install ?? (await postgresSkipReason());
if (postgres && !install) console.warn(`TypeScript ${TYPESCRIPT} + Jest ${JEST} suite: the run against PostgreSQL is skipped: ${postgres}`);

describe(`an express project of 2019 on TypeScript ${TYPESCRIPT} and Jest ${JEST} (ts-jest), noUnusedLocals, importHelpers`, () => {
  let dir = '';
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(install !== undefined)('compiles with the project compiler and its own tsconfig', { timeout: 120_000 }, async () => {
    await mkdir(path.join(CACHE, 'projects'), { recursive: true });
    dir = await mkdtemp(path.join(CACHE, 'projects', 'express-ts39-jest23-'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...MANIFEST, jest: JEST_CONFIG }));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'typescript', testFramework: 'jest' });
    expect(profile).toMatchObject({ moduleSystem: 'commonjs', defaultImportInterop: true, testRunner: 'jest', typescriptVersion: 309, jestSandbox: true, bareBuiltins: true, jestGlobals: true, jestEncoding: true });
    expect(profile.jestIgnoresSuites).toBeUndefined();
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', framework: 'express', database: 'postgres', testFramework: 'jest' });
    });
    // The packages compiled against are the ones the hint names, at the releases it pins (no skipLibCheck needed).
    const { notes } = await scaffoldProject({ root: dir, model, dir: 'src/idempotency', packageManager: 'npm' });
    const hint = notes.join('\n');
    expect(hint).not.toMatch(/skipLibCheck|cannot parse|compiles with TypeScript/);
    const hinted = [...hint.matchAll(/npm i (?:-D )?([^&]+)/g)].flatMap((match) => match[1]!.trim().split(' '));
    expect(hinted.sort()).toEqual(['@types/express-serve-static-core@4.17.28', '@types/express@4.17.13', '@types/pg', 'pg', 'pg-protocol@1.14', 'prom-client@14.2']);
    for (const entry of hinted) {
      const [, name = '', pin = ''] = /^(@?[^@]+)(?:@(.+))?$/.exec(entry) ?? [];
      expect(PACKAGES[name as keyof typeof PACKAGES], entry).toMatch(new RegExp(`^${pin.replace(/\./g, '\\.')}`));
    }
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    // Jest 23's sandbox has no TextEncoder, which pg reads as it loads: each suite's first import puts Node's there.
    const suites = files.filter((file) => /\.test\.ts$/.test(file.path));
    expect(suites.map((suite) => suite.path)).toEqual(expect.arrayContaining(['src/idempotency/idempotency.test.ts', 'src/idempotency/webhooks/webhooks.test.ts']));
    for (const suite of suites) {
      const depth = suite.path.split('/').length - 3;
      expect(/^import .*$/m.exec(suite.contents)?.[0], suite.path).toBe(`import '${depth === 0 ? './' : '../'.repeat(depth)}jest-sandbox';`);
    }
    const output = await writeAndTypeCheck(CACHE, dir, files);
    expect(output.split(dir).join('<project>').split(CACHE).join('<cache>')).toBe('');
  });

  it.skipIf(postgres !== undefined)('runs the generated suites with its own Jest (ts-jest type-checks them) against PostgreSQL', { timeout: 300_000 }, async () => {
    expect(dir, 'the compile step ran').not.toBe('');
    const jest = path.join(CACHE, 'node_modules/jest/bin/jest.js');
    const result = await run(process.execPath, [jest, '--ci', '--rootDir', dir], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the generated suites failed under Jest ${JEST}:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* failed\b/);
    expect(output).not.toMatch(/\b[1-9]\d* skipped\b/);
    expect(output).toMatch(/idempotency\.test\.ts/);
    expect(output).toMatch(/webhooks\.test\.ts/);
    expect(output).toMatch(/Tests:\s+[1-9]\d* passed/);
  });
});
