import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderInstance } from '../../src/apply/renderInstance.js';
import { renderMiddlewareInstance } from '../../src/apply/transforms/koaRoute.js';
import { renderNextInstance } from '../../src/apply/transforms/nextInstance.js';
import { renderPlainInstance } from '../../src/apply/transforms/plainWrap.js';
import { runApply } from '../../src/cli/apply.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { compile, ROOT } from './fixtureApp.js';

/** fixtures/apply/<name> copied under .tmp with its config's database switched, and the scaffold generate writes for it. */
async function copyWithDatabase(name: string, database: string): Promise<string> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `apply-${name}-${database}-`));
  await cp(path.join(ROOT, 'fixtures/apply', name), dir, { recursive: true });
  const configFile = path.join(dir, 'idempotency.config.json');
  const raw = JSON.parse(await readFile(configFile, 'utf8')) as { stack: Record<string, unknown> };
  raw.stack['database'] = database;
  await writeFile(configFile, JSON.stringify(raw, null, 2));
  const { config } = await loadConfig(dir);
  const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z') });
  for (const file of generateScaffold(model, { dir: config.scaffold === false ? 'src/idempotency' : config.scaffold.dir })) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  return dir;
}

describe('the instance apply writes follows the project\'s store', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('a Fastify app on MySQL: instance.ts opens the mysql2 pool of the scaffold, and the app type-checks', async () => {
    const dir = await copyWithDatabase('fastify', 'mysql');
    dirs.push(dir);
    const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    const instance = await readFile(path.join(dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('// DATABASE_URL is the MySQL / MariaDB server the store migration ran on: mysql://user:password@host:3306/database.');
    expect(instance).toContain("if (opened === undefined) opened = createPool(process.env['DATABASE_URL'] ?? '', POLICY);");
    expect(instance).not.toContain('pg falls back');
    // createPool here is the scaffold's mysql2 one: passing its pool to createIdempotency type-checks only so.
    expect(await readFile(path.join(dir, 'src/idempotency/index.ts'), 'utf8')).toContain("export { createPool, type PoolLimits } from './pool.js';");
    expect(await readFile(path.join(dir, 'src/idempotency/pool.ts'), 'utf8')).toContain('mysql2');
    // The app's graceful shutdown reaches the store's pool through the instance module; closeIdempotency() ends it.
    expect(instance).toContain('export function closeIdempotency(): Promise<void> {');
    await writeFile(path.join(dir, 'src/shutdown.ts'), "import { closeIdempotency, pool } from './idempotency/instance.js';\n\nexport async function shutdown(): Promise<void> {\n  await pool.query('SELECT 1');\n  await closeIdempotency();\n}\n");
    expect(await compile(dir)).toBe('');
    // An apply and a tsc of the app: minutes on a saturated machine.
  }, 300_000);

  it('each store gets its own connection line; PostgreSQL (and a database without a store) keep the pg one', () => {
    // Under tests on the memory store the Redis client never connects (it would hold the test process open).
    expect(renderInstance('express', undefined, 'redis')).toContain("opened = createPool(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', POLICY, { lazyConnect: inTests });");
    expect(renderInstance('express', undefined, 'redis', false)).toContain("opened = createPool(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', POLICY);");
    expect(renderInstance('fastify', undefined, 'sqlite')).toContain("opened = createPool(process.env['DATABASE_URL'] ?? 'idempotency.db', POLICY);");
    // libSQL: a libsql:// URL with DATABASE_AUTH_TOKEN, which createPool reads itself.
    expect(renderMiddlewareInstance('hono', undefined, 'libsql')).toContain("opened = createPool(process.env['DATABASE_URL'] ?? 'file:idempotency.db', POLICY);");
    expect(renderInstance('nestjs', undefined, 'dynamodb')).toContain("const pool = createPool(process.env['DYNAMODB_ENDPOINT'], POLICY);");
    expect(renderNextInstance(false, 'redis')).toContain("REDIS_URL");
    for (const store of ['postgres', undefined, 'mongodb']) {
      expect(renderInstance('express', undefined, store)).toContain("// With DATABASE_URL unset, pg falls back to its PGHOST/PGUSER/PGDATABASE environment variables.");
      expect(renderInstance('express', undefined, store)).toContain("\n  if (opened === undefined) opened = createPool(process.env['DATABASE_URL'] ?? '', POLICY);");
    }
  });

  it('every instance module exports its pool (health checks) and closeIdempotency(), which ends it once, on every store', () => {
    const close: Record<string, string> = { postgres: 'await pool.end();', mysql: 'await pool.end();', sqlite: 'pool.end();', libsql: 'pool.close();', redis: "if (pool.status === 'wait') pool.disconnect();\n      else await pool.quit();", dynamodb: 'pool.client.destroy();' };
    for (const [store, closing] of Object.entries(close)) {
      const modules = [
        renderInstance('express', undefined, store),
        renderInstance('fastify', undefined, store),
        renderInstance('nestjs', undefined, store),
        renderMiddlewareInstance('koa', undefined, store),
        renderMiddlewareInstance('hono', undefined, store),
        renderPlainInstance(store),
        renderNextInstance(true, store),
      ];
      for (const text of modules) {
        // Opened on first use (the app may load its .env after importing this module), except DynamoDB's, whose store
        // reads the client off it as the instance is built.
        const deferred = store !== 'dynamodb';
        expect(text).toMatch(deferred ? /^export const pool = new Proxy\(\{\} as ReturnType<typeof createPool>, \{$/m : /^export const pool = createPool\(/m);
        expect(text).toContain(deferred ? "// Exported for health checks (a use opens it); your process's shutdown may end it with closeIdempotency() (below)." : "// Exported for health checks; your process's shutdown may end it with closeIdempotency() (below).");
        const ending = deferred ? `if (opened === undefined) return; // never used (the memory store under tests): nothing to end\n      ${closing}` : closing;
        expect(text).toContain(`export function closeIdempotency(): Promise<void> {\n  if (closing === undefined)\n    closing = (async () => {\n      ${ending}\n    })();\n  return closing;\n}`);
        expect(text).toMatch(/createIdempotency\(\{\n\s+pool,/);
      }
    }
  });

  it('closeIdempotency() type-checks against each store\'s pool, and a shutdown can call it', async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'instance-pools-'));
    dirs.push(dir);
    const stores = ['postgres', 'mysql', 'sqlite', 'libsql', 'redis', 'dynamodb'];
    for (const database of stores) {
      const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as { stack: Record<string, unknown> };
      raw.stack['database'] = database;
      const model = buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: new Date('2026-01-15T00:00:00Z') });
      for (const file of generateScaffold(model, { dir: `${database}/idempotency` })) {
        if (!/\.ts$/.test(file.path) || file.role === 'tests') continue;
        await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
        await writeFile(path.join(dir, file.path), file.contents);
      }
      const instance = renderInstance('express', undefined, database);
      await writeFile(path.join(dir, `${database}/idempotency/instance.ts`), instance);
      // What apply's manual step tells the user to write in their shutdown.
      await writeFile(path.join(dir, `${database}/shutdown.ts`), `import { closeIdempotency } from './idempotency/instance.js';\n\nexport async function shutdown(): Promise<void> {\n  await closeIdempotency();\n}\n`);
    }
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, noEmit: true, types: ['node'] }, include: stores }),
    );
    expect(await compile(dir)).toBe('');
  }, 300_000);
});
