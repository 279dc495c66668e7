import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateScaffold } from '../../src/scaffold/index.js';
import { findTarget } from '../../src/scaffold/registry.js';
import { modelFor, ROOT } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { MYSQL_URL, mysqlSkipReason, REDIS_URL, redisSkipReason, startDynalite } from './storeContract/services.js';

const run = promisify(execFile);

type Store = 'postgres' | 'mysql' | 'sqlite' | 'libsql' | 'redis' | 'dynamodb';
const STORES: Store[] = ['postgres', 'mysql', 'sqlite', 'libsql', 'redis', 'dynamodb'];
type Framework = 'express' | 'fastify' | 'nestjs' | 'koa' | 'hono' | 'nextjs' | 'none';
/** The target id's name for a `stack.framework`. */
const idName = (framework: Framework) => (framework === 'none' ? 'plain' : framework);
// Express on a lease-mode design (Stripe), Fastify on a transactional one (no provider): both modes on every store
// that offers transactions; their generated suites run on every store.
const FRAMEWORKS = [
  { framework: 'express', fixture: 'express-stripe-payments' },
  { framework: 'fastify', fixture: 'minimal-one-action' },
] as const;
// Every other adapter on every store besides PostgreSQL (their PostgreSQL targets have suites of their own): each
// combination is type-checked; the ones marked `suite` also run their generated suite against the real server.
const OTHERS: Array<{ framework: Framework; store: Store; fixture: string; suite?: true }> = [
  { framework: 'nestjs', store: 'mysql', fixture: 'minimal-one-action', suite: true },
  { framework: 'nestjs', store: 'sqlite', fixture: 'express-stripe-payments' },
  { framework: 'nestjs', store: 'redis', fixture: 'minimal-one-action' },
  { framework: 'koa', store: 'mysql', fixture: 'express-stripe-payments' },
  { framework: 'koa', store: 'sqlite', fixture: 'minimal-one-action' },
  { framework: 'koa', store: 'redis', fixture: 'express-stripe-payments', suite: true },
  { framework: 'hono', store: 'mysql', fixture: 'minimal-one-action' },
  { framework: 'hono', store: 'sqlite', fixture: 'express-stripe-payments' },
  { framework: 'hono', store: 'redis', fixture: 'minimal-one-action' },
  { framework: 'nextjs', store: 'mysql', fixture: 'express-stripe-payments' },
  { framework: 'nextjs', store: 'sqlite', fixture: 'minimal-one-action', suite: true },
  { framework: 'nextjs', store: 'redis', fixture: 'express-stripe-payments' },
  { framework: 'none', store: 'mysql', fixture: 'minimal-one-action' },
  { framework: 'none', store: 'sqlite', fixture: 'express-stripe-payments' },
  { framework: 'none', store: 'redis', fixture: 'minimal-one-action' },
  { framework: 'nestjs', store: 'dynamodb', fixture: 'express-stripe-payments' },
  { framework: 'koa', store: 'dynamodb', fixture: 'minimal-one-action' },
  { framework: 'hono', store: 'dynamodb', fixture: 'express-stripe-payments' },
  { framework: 'nextjs', store: 'dynamodb', fixture: 'minimal-one-action' },
  { framework: 'none', store: 'dynamodb', fixture: 'express-stripe-payments' },
];
const CASES = [
  ...FRAMEWORKS.flatMap(({ framework, fixture }) => STORES.map((store) => ({ framework: framework as Framework, fixture, store, suite: true }))),
  ...OTHERS.map((entry) => ({ ...entry, suite: entry.suite ?? false })),
].map((entry) => ({ ...entry, label: `${idName(entry.framework)}-${entry.store}` }));

const skips: Record<Store, string | undefined> = {
  postgres: await postgresSkipReason(),
  mysql: await mysqlSkipReason(),
  sqlite: undefined,
  // A local file: database through @libsql/client: never skipped.
  libsql: undefined,
  redis: await redisSkipReason(),
  // dynalite serves the DynamoDB API from this process: never skipped.
  dynamodb: undefined,
};
const dynamo = await startDynalite();
for (const [store, reason] of Object.entries(skips)) if (reason) console.warn(`stores matrix: ${store} suites skipped: ${reason}`);

// MySQL reads DATABASE_URL too, so its suites run in a vitest process of their own.
const RUNS: Array<{ name: string; stores: Store[]; env: Record<string, string> }> = [
  { name: 'PostgreSQL, SQLite, libSQL and Redis', stores: ['postgres', 'sqlite', 'libsql', 'redis'] as Store[], env: { DATABASE_URL, REDIS_URL } },
  { name: 'MySQL/MariaDB', stores: ['mysql'] as Store[], env: { DATABASE_URL: MYSQL_URL } },
  { name: 'DynamoDB', stores: ['dynamodb'] as Store[], env: { DYNAMODB_ENDPOINT: dynamo.endpoint } },
];

/**
 * Every adapter on every store: the scaffold is generated and type-checked under --strict in one tsc run; on Express and
 * Fastify (every store) and on NestJS + MySQL, Next.js + SQLite and Koa + Redis its own generated suites
 * (idempotency.test.ts, and store-contract.test.ts once per store) pass against the real servers.
 */
describe('framework × store matrix', () => {
  let dir = '';
  // One after another: the generated suites bound every store call in time, so they must not share a saturated machine
  // with the type-check or with each other's runs.
  let compiled: Promise<string>;
  const suites = new Map<string, Promise<{ stdout: string; filters: string[] }>>();
  beforeAll(async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'stores-matrix-'));
    for (const { framework, fixture, store, label } of CASES) {
      const model = await modelFor(fixture, (raw) => {
        Object.assign(raw.stack as Record<string, unknown>, { framework, database: store, language: 'typescript', testFramework: 'vitest' });
      });
      for (const file of generateScaffold(model, { dir: `${label}/src/idempotency` })) {
        await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
        await writeFile(path.join(dir, file.path), file.contents);
      }
    }
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    // NestJS asks the project's tsconfig for decorators; the other adapters compile the same with them on.
    const compilerOptions = {
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      // What shared bases such as fastify-tsconfig add (fastify/demo@1f50cc1): no unused import in any generated file.
      noUnusedLocals: true,
      noUnusedParameters: true,
      noFallthroughCasesInSwitch: true,
      isolatedModules: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*/src'] }, null, 2));
    await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['*/src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 30000 } };\n");
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    compiled = run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    let previous: Promise<unknown> = compiled;
    for (const { name, stores, env } of RUNS) {
      const suite = previous.then(() => runSuites(stores, env));
      suites.set(name, suite);
      previous = suite;
    }
  });
  afterAll(async () => {
    await dynamo.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(CASES)('$label has a target of its own', async ({ framework, fixture, store }) => {
    const model = await modelFor(fixture, (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework, database: store }));
    expect(findTarget(model.stack)?.id).toBe(`typescript-${idName(framework)}-${store}`);
  });

  it('every combination compiles with tsc --strict', { timeout: 600_000 }, async () => {
    expect(await compiled).toBe('');
  });

  it.each(RUNS)('the generated suites pass on $name', { timeout: 600_000 }, async ({ name }) => {
    const { stdout, filters } = await suites.get(name)!;
    if (filters.length === 0) return;
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/\d+ failed/);
    for (const filter of filters) expect(stdout).toContain(filter);
    for (const filter of filters.filter((entry) => entry.startsWith('express-'))) expect(stdout).toContain(`${filter}src/idempotency/store-contract.test.ts`);
  });

  async function runSuites(stores: Store[], env: Record<string, string>): Promise<{ stdout: string; filters: string[] }> {
    const live = stores.filter((store) => !skips[store]);
    // The store contract does not depend on the framework: it runs once per store, in the Express scaffold.
    const filters = CASES.filter((entry) => entry.suite && live.includes(entry.store)).map((entry) =>
      entry.framework === 'express' ? `${entry.label}/` : `${entry.label}/src/idempotency/idempotency.test`,
    );
    if (filters.length === 0) return { stdout: '', filters };
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const { stdout } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose', ...filters], {
      cwd: dir,
      env: { ...process.env, ...env, CI: '1', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `generated suites failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}` }));
    return { stdout, filters };
  }
});
