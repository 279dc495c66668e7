import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { installIntoCache, writeAndTypeCheck } from './npmCache.js';

const run = promisify(execFile);

/**
 * A 2021-22 TypeScript project (javieraviles/node-typescript-koa-rest's toolchain): TypeScript 4.2 and the
 * typings of its day, which declare no fetch, Response, ReadableStream or Node 18's headersDistinct, an
 * AbortController whose abort() may take no reason, and a pg PoolConfig without lock_timeout. oldToolchain.test.ts
 * stubs every package and global, so only this suite checks that the generated code calls the real old typings
 * right. The compiler and the typings are installed once into a scratch folder (this repository's node_modules hold
 * today's); the projects live under it so that they resolve there.
 */
const TYPESCRIPT = '4.2.4';
const PACKAGES = {
  typescript: TYPESCRIPT,
  jest: '26.6.3',
  pg: '8.7.3',
  '@types/pg': '8.6.6',
  koa: '2.13.4',
  '@types/koa': '2.13.4',
  '@koa/router': '10.1.1',
  '@types/koa__router': '8.0.11',
  express: '4.17.3',
  '@types/express': '4.17.13',
  mysql2: '2.3.3',
  ioredis: '5.3.2',
  'prom-client': '14.0.1',
  // For the projects whose runner is not Jest (no sandbox binds fetch or Response for them).
  mocha: '9.2.2',
  '@types/mocha': '9.1.1',
};
// @types/express 4.17.13 asks for ^4.17.18 of this one, whose newest releases TypeScript 4.2 cannot parse.
const OVERRIDES = { '@types/express-serve-static-core': '4.17.28' };
/**
 * @types/node 14.14 (no crypto.randomUUID, AbortController or performance global), 16 (no fetch, Response or
 * headersDistinct) and 18.15 (web globals, but not all of today's).
 */
const NODE_TYPES = ['14.14.45', '16.11.26', '18.15.13'];
/**
 * Packages of the typings' own period where they differ: ioredis 5.0.0 exports the Redis class only as the default
 * (5.0.x later added it by name as a type only), so `import { Redis }` fails there.
 */
const OF_PERIOD: Record<string, Record<string, string>> = { '14.14.45': { ioredis: '5.0.0' } };
const cacheFor = (nodeTypes: string) => path.join(os.tmpdir(), `idempotency-builder-typescript${TYPESCRIPT}-node${nodeTypes}`);

/** A nightly job beside the fixture's actions: the cron guard (and its Vercel route) is generated with it. */
const NIGHTLY_JOB = {
  name: 'closeBooks',
  trigger: 'cron',
  route: '0 3 * * *',
  significantFields: ['businessDay'],
  expectedDurationMs: 60_000,
  scope: 'global',
  key: { source: 'derived', from: ['jobName', 'businessDay'] },
};

interface Variant {
  label: string;
  fixture: string;
  stack: Record<string, string>;
  /** The project's test runner; Jest (26, whose sandbox the scaffold binds web globals for) unless named. */
  runner?: 'jest' | 'mocha';
  withCron?: boolean;
  /** The @types/node releases the stack is checked under; all of NODE_TYPES unless named. */
  nodeTypes?: string[];
}

const VARIANTS: Variant[] = [
  { label: 'koa-postgres', fixture: 'express-stripe-payments', stack: { framework: 'koa', database: 'postgres' } },
  { label: 'express-postgres', fixture: 'express-stripe-payments', stack: { framework: 'express', database: 'postgres' } },
  { label: 'express-mysql', fixture: 'express-stripe-payments', stack: { framework: 'express', database: 'mysql' } },
  { label: 'koa-redis', fixture: 'minimal-one-action', stack: { framework: 'koa', database: 'redis' } },
  // Mocha binds no globals: cleanup-job.ts's fetch and the cron route's Response must be read by shape. Not under
  // @types/node 14, whose missing AbortController and performance only Jest's sandbox binding supplies.
  {
    label: 'express-postgres-cron-mocha',
    fixture: 'express-stripe-payments',
    stack: { framework: 'express', database: 'postgres' },
    runner: 'mocha',
    withCron: true,
    nodeTypes: ['16.11.26', '18.15.13'],
  },
];

/** The project's own tsconfig as such projects had it: CommonJS, strict, lib from the target's year. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2018',
    // Without lib TypeScript adds the DOM's, which would declare fetch, Response and ReadableStream after all.
    lib: ['es2018'],
    module: 'commonjs',
    moduleResolution: 'node',
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    // Only Node's: every @types folder Jest 26 pulls in today (babel__traverse) is newer than TypeScript 4.2 parses.
    types: ['node'],
    noEmit: true,
  },
  include: ['src/**/*'],
};

const skips = new Map<string, string | undefined>();
for (const nodeTypes of NODE_TYPES) {
  const skip = await installIntoCache(cacheFor(nodeTypes), { ...PACKAGES, ...OF_PERIOD[nodeTypes], '@types/node': nodeTypes }, OVERRIDES);
  if (skip) console.warn(`old typings suite (@types/node ${nodeTypes}) skipped: ${skip}`);
  skips.set(nodeTypes, skip);
}

describe.each(NODE_TYPES)(`generated TypeScript under TypeScript ${TYPESCRIPT}, @types/node %s and the typings of their day`, (nodeTypes) => {
  const CACHE = cacheFor(nodeTypes);
  const skip = skips.get(nodeTypes);
  const dirs: string[] = [];
  afterAll(async () => {
    if (!process.env.KEEP_PROFILE_PROJECTS) await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const variants = VARIANTS.filter((variant) => variant.nodeTypes?.includes(nodeTypes) ?? true);
  it.skipIf(skip !== undefined).each(variants)('$label compiles with the project compiler', { timeout: 120_000 }, async ({ label, fixture, stack, runner = 'jest', withCron }) => {
    await mkdir(path.join(CACHE, 'projects'), { recursive: true });
    const dir = await mkdtemp(path.join(CACHE, 'projects', `${label}-`));
    dirs.push(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, scripts: { test: runner }, devDependencies: { typescript: TYPESCRIPT, [runner]: PACKAGES[runner] } }));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'typescript', testFramework: runner });
    expect(profile).toMatchObject({ moduleSystem: 'commonjs', testRunner: runner, typescriptVersion: 402 });
    expect(profile.jestSandbox).toBe(runner === 'jest' ? true : undefined);
    const model = await modelFor(fixture, (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', testFramework: runner, ...stack });
      if (withCron) (raw.actions as unknown[]).push(NIGHTLY_JOB);
    });
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    if (withCron) {
      const paths = files.map((file) => file.path);
      expect(paths).toEqual(expect.arrayContaining(['src/idempotency/cleanup-job.ts', 'src/idempotency/cron/guard.ts']));
    }
    const output = await writeAndTypeCheck(CACHE, dir, files);
    expect(output.split(dir).join('<project>')).toBe('');
  });
});

/**
 * A 2020 NestJS project (lujakob/nestjs-realworld-example-app, the #15 trial): NestJS 7 and rxjs 6, which have no
 * StreamableFile or lastValueFrom; TypeScript 3.9; CommonJS without esModuleInterop; Jest before 27 (bare builtin
 * specifiers); prom-client 12, whose Gauge has no `collect`; and the typings the install hint names for such a
 * project. The scaffold compiles with that compiler, then the tsc output runs its own suite under that Jest against
 * PostgreSQL, the Nest 7 interceptor included.
 */
const NEST7_TYPESCRIPT = '3.9.10';
const NEST7_PACKAGES = {
  typescript: NEST7_TYPESCRIPT,
  jest: '26.6.3',
  '@nestjs/common': '7.6.18',
  '@nestjs/core': '7.6.18',
  '@nestjs/platform-express': '7.6.18',
  'reflect-metadata': '0.1.13',
  rxjs: '6.6.7',
  pg: '8.7.3',
  '@types/pg': '8.6.6',
  express: '4.17.3',
  '@types/express': '4.17.13',
  'prom-client': '12.0.0',
  '@types/node': '14.18.63',
};
const NEST7_CACHE = path.join(os.tmpdir(), `idempotency-builder-typescript${NEST7_TYPESCRIPT}-nest7`);
const nest7Skip = await installIntoCache(NEST7_CACHE, NEST7_PACKAGES, OVERRIDES);
if (nest7Skip) console.warn(`NestJS 7 suite skipped: ${nest7Skip}`);
const nest7PostgresSkip = nest7Skip ?? (await postgresSkipReason());
if (nest7PostgresSkip && !nest7Skip) console.warn(`NestJS 7 suite: the run against PostgreSQL is skipped: ${nest7PostgresSkip}`);

describe(`a NestJS 7 + rxjs 6 + prom-client 12 project on TypeScript ${NEST7_TYPESCRIPT}, CommonJS without esModuleInterop`, () => {
  let dir = '';
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });
  const tsc = (args: string[]) =>
    run(process.execPath, [path.join(NEST7_CACHE, 'node_modules/typescript/bin/tsc'), ...args], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      (result) => `${result.stdout}${result.stderr}`,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );

  it.skipIf(nest7Skip !== undefined)('compiles with the project compiler', { timeout: 120_000 }, async () => {
    await mkdir(path.join(NEST7_CACHE, 'projects'), { recursive: true });
    dir = await mkdtemp(path.join(NEST7_CACHE, 'projects', 'nest7-'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, scripts: { test: 'jest' }, dependencies: { '@nestjs/common': '^7.0.5', rxjs: '^6.5.5' }, devDependencies: { typescript: NEST7_TYPESCRIPT, jest: NEST7_PACKAGES.jest } }));
    // The trial's tsconfig, strict added: the generated code must hold up under it.
    const tsconfig = {
      compilerOptions: { module: 'commonjs', target: 'es6', lib: ['es2017'], strict: true, experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true, types: ['node'] },
      include: ['src/**/*'],
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'typescript', testFramework: 'jest' });
    expect(profile).toMatchObject({ moduleSystem: 'commonjs', defaultImportInterop: false, testRunner: 'jest', typescriptVersion: 309, bareBuiltins: true });
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', framework: 'nestjs', database: 'postgres', testFramework: 'jest' });
    });
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    for (const file of files) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
    }
    expect((await tsc(['--noEmit', '-p', dir])).split(dir).join('<project>')).toBe('');
  });

  it.skipIf(nest7PostgresSkip !== undefined)('runs its own suite, compiled by that tsc, under Jest 26 against PostgreSQL', { timeout: 240_000 }, async () => {
    expect(dir, 'the compile step ran').not.toBe('');
    // The JavaScript lands beside the TypeScript, so the suites find the migrations next to them as in the project.
    expect((await tsc(['-p', dir])).split(dir).join('<project>')).toBe('');
    const jest = path.join(NEST7_CACHE, 'node_modules/jest/bin/jest.js');
    const result = await run(process.execPath, [jest, '--ci', '--rootDir', dir, '--testEnvironment', 'node', '--testMatch', '**/*.test.js'], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the generated suite failed under NestJS 7:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* failed\b/);
    expect(output).not.toMatch(/\b[1-9]\d* skipped\b/);
    expect(output).toMatch(/idempotency\.test\.js/);
    expect(output).toMatch(/Tests:\s+[1-9]\d* passed/);
  });
});
