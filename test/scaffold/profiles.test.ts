import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile, type ProjectProfile } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`profile matrix against PostgreSQL skipped: ${skip}`);

const bin = (relative: string) => path.join(ROOT, 'node_modules', relative);
const TSC = bin('typescript/bin/tsc');

interface ProfileCase {
  label: string;
  language: 'typescript' | 'javascript';
  runner: 'vitest' | 'jest' | 'node-test' | 'mocha';
  packageType: 'module' | 'commonjs';
  /** The project's tsconfig compilerOptions (TypeScript cases); outDir/rootDir/typeRoots are added. */
  compilerOptions?: Record<string, unknown>;
  /** What readProjectProfile must make of it. */
  expected: Partial<ProjectProfile>;
  /** Files the runner needs, as a user's project would have them. */
  extraFiles?: Record<string, string>;
  /** The design (fixtures/configs); default express-stripe-payments. */
  fixture?: string;
  /** Runs the generated suite; the emitted JavaScript is in dist/ for compiled cases. */
  command: (dir: string) => string[];
}

const CASES: ProfileCase[] = [
  {
    // A Vite/tsup-style project: ES modules, bundler resolution, extensionless relative imports.
    label: 'ts-bundler-vitest',
    language: 'typescript',
    runner: 'vitest',
    packageType: 'module',
    compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', noEmit: true },
    expected: { moduleSystem: 'esm', relativeImports: 'extensionless', defaultImportInterop: true },
    extraFiles: { 'vitest.config.mjs': "export default { test: { include: ['src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 30000 } };\n" },
    command: () => [bin('vitest/vitest.mjs'), 'run', '--config', 'vitest.config.mjs', '--root', '.'],
  },
  {
    // The classic NestJS tsconfig: CommonJS without esModuleInterop, an old target, ts-jest.
    label: 'ts-cjs-no-interop-es2019-jest',
    language: 'typescript',
    runner: 'jest',
    packageType: 'commonjs',
    compilerOptions: { target: 'ES2019', module: 'commonjs', noEmit: true },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: false, esLibrary: 2019 },
    extraFiles: {
      'jest.config.cjs': `module.exports = { rootDir: __dirname, roots: ['<rootDir>/src'], testEnvironment: 'node', transform: { '^.+\\\\.ts$': [${JSON.stringify(bin('ts-jest'))}, { isolatedModules: true }] } };\n`,
    },
    command: () => [bin('jest/bin/jest.js'), '--config', 'jest.config.cjs', '--ci'],
  },
  {
    // `nest new`'s tsconfig: CommonJS, allowSyntheticDefaultImports but no esModuleInterop (pg_1.default.Pool would
    // be undefined at start), decorators; the NestJS adapter's suite under ts-jest.
    label: 'nestjs-classic-cjs-jest',
    language: 'typescript',
    runner: 'jest',
    packageType: 'commonjs',
    fixture: 'nestjs-adyen-saga',
    // Nest's defaults also switch strictNullChecks and noImplicitAny off: the generated code must compile that way too.
    compilerOptions: { target: 'ES2021', module: 'commonjs', allowSyntheticDefaultImports: true, experimentalDecorators: true, emitDecoratorMetadata: true, noEmit: true, strict: false, strictNullChecks: false, noImplicitAny: false },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: false, esLibrary: 2021 },
    extraFiles: {
      'jest.config.cjs': `module.exports = { rootDir: __dirname, roots: ['<rootDir>/src'], testEnvironment: 'node', transform: { '^.+\\.ts$': [${JSON.stringify(bin('ts-jest'))}, { isolatedModules: true }] } };\n`,
    },
    command: () => [bin('jest/bin/jest.js'), '--config', 'jest.config.cjs', '--ci'],
  },
  {
    label: 'ts-cjs-interop-es2019-mocha',
    language: 'typescript',
    runner: 'mocha',
    packageType: 'commonjs',
    compilerOptions: { target: 'ES2019', module: 'commonjs', esModuleInterop: true },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: true, esLibrary: 2019 },
    // The store contract too: written once against Vitest's API, it must run on Mocha's globals and node:assert.
    command: () => [bin('mocha/bin/mocha.js'), 'dist/idempotency/idempotency.test.js', 'dist/idempotency/store-contract.test.js'],
  },
  {
    label: 'ts-nodenext-esm-node-test',
    language: 'typescript',
    runner: 'node-test',
    packageType: 'module',
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext' },
    expected: { moduleSystem: 'esm', relativeImports: 'js-extension', defaultImportInterop: true },
    // The store contract and a trigger suite (webhooks) too, from tsc's output, which has no .sql files beside them.
    command: () => ['--test', 'dist/idempotency/idempotency.test.js', 'dist/idempotency/store-contract.test.js', 'dist/idempotency/webhooks/webhooks.test.js'],
  },
  {
    label: 'js-esm-node-test',
    language: 'javascript',
    runner: 'node-test',
    packageType: 'module',
    expected: { moduleSystem: 'esm' },
    command: () => ['--test', 'src/idempotency/idempotency.test.js'],
  },
  {
    label: 'js-cjs-mocha',
    language: 'javascript',
    runner: 'mocha',
    packageType: 'commonjs',
    expected: { moduleSystem: 'commonjs' },
    command: () => [bin('mocha/bin/mocha.js'), 'src/idempotency/idempotency.test.js'],
  },
];

async function writeProject(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), contents);
  }
}

/**
 * Each profile once: a project with that tsconfig/package.json under .tmp (so packages resolve from this repo's
 * node_modules, as from the user's), the Express + PostgreSQL scaffold generated for the profile readProjectProfile
 * reads, compiled by tsc under that tsconfig, then the generated suite run with the project's runner.
 */
describe.each(CASES)('profile $label', (profileCase) => {
  const dirs: string[] = [];
  afterAll(async () => {
    if (!process.env.KEEP_PROFILE_PROJECTS) for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('is read from the project, compiles under its tsconfig and passes its suite with its runner', { timeout: 240_000 }, async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', `profile-${profileCase.label}-`));
    dirs.push(dir);
    const tsconfig = {
      compilerOptions: { strict: true, skipLibCheck: true, types: ['node'], typeRoots: [bin('@types')], outDir: 'dist', rootDir: 'src', ...profileCase.compilerOptions },
      include: ['src'],
    };
    await writeProject(dir, {
      'package.json': JSON.stringify({ private: true, type: profileCase.packageType }),
      ...(profileCase.language === 'typescript' ? { 'tsconfig.json': JSON.stringify(tsconfig, null, 2) } : {}),
      ...profileCase.extraFiles,
    });

    const model = await modelFor(profileCase.fixture ?? 'express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: profileCase.language, testFramework: profileCase.runner });
    });
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: profileCase.language, testFramework: profileCase.runner });
    expect(profile).toMatchObject({ ...profileCase.expected, testRunner: profileCase.runner });
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    await writeProject(dir, Object.fromEntries(files.map((file) => [file.path, file.contents])));

    const suites = files.filter((file) => file.role === 'tests');
    if (profileCase.runner !== 'vitest') for (const suite of suites) expect(suite.contents, suite.path).not.toContain('vitest');
    if (profile.moduleSystem === 'commonjs') expect(files.map((file) => file.contents).join('\n')).not.toContain('import.meta');
    // Without esModuleInterop a default import compiles to pg_1.default, which is undefined at run time.
    if (profile.language === 'typescript' && !profile.defaultImportInterop) expect(files.find((file) => file.path.endsWith('/pool.ts'))!.contents).toContain("import pg = require('pg');");
    if (profile.relativeImports === 'extensionless') expect(files.find((file) => file.path.endsWith('/index.ts'))!.contents).toContain("from './core';");

    if (profileCase.language === 'typescript') {
      const compiled = await run(process.execPath, [TSC, '-p', dir], { cwd: dir }).then(
        () => '',
        (error: { stdout?: string }) => String(error.stdout),
      );
      expect(compiled).toBe('');
    }
    if (skip) return;
    const result = await run(process.execPath, profileCase.command(dir), {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated ${profileCase.runner} suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* (failed|failing)\b|# fail [1-9]/);
    expect(output).toMatch(/\b[1-9]\d* pass(ed|ing)?\b|# pass [1-9]/);
  });
});
