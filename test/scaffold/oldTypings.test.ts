import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { installIntoCache } from './npmCache.js';

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
    for (const file of files) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
    }
    const tsc = path.join(CACHE, 'node_modules/typescript/bin/tsc');
    const output = await run(process.execPath, [tsc, '--noEmit', '-p', dir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      (result) => `${result.stdout}${result.stderr}`,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(output.split(dir).join('<project>')).toBe('');
  });
});
