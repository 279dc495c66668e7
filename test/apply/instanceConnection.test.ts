import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { instancePool, renderInstance } from '../../src/apply/renderInstance.js';
import { renderMiddlewareInstance } from '../../src/apply/transforms/koaRoute.js';
import { renderNextInstance } from '../../src/apply/transforms/nextInstance.js';
import { renderPlainInstance } from '../../src/apply/transforms/plainWrap.js';
import { runApply } from '../../src/cli/apply.js';
import { parseConfig } from '../../src/config/load.js';
import type { StoreConnection } from '../../src/inspect/types.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { DATABASE_URL, postgresSkipReason } from '../scaffold/harness.js';
import { MYSQL_URL, mysqlSkipReason } from '../scaffold/storeContract/services.js';
import { tempProject } from '../helpers/tempProject.js';
import { compile, copyFixture, ROOT } from './fixtureApp.js';

const KNEX: StoreConnection = { store: 'mysql', host: 'MYSQL_HOST', port: 'MYSQL_PORT', user: 'MYSQL_USER', password: 'MYSQL_PASSWORD', database: 'MYSQL_DATABASE', file: 'src/plugins/external/knex.ts', line: 12 };
const PG_URL: StoreConnection = { store: 'postgres', url: 'POSTGRES_URL', file: 'src/db.ts', line: 3 };
const PG_PARTS: StoreConnection = { store: 'postgres', host: 'DB_HOST', port: 'DB_PORT', user: 'DB_USER', database: 'DB_NAME', file: 'src/app.module.ts', line: 9 };
const TODAY = "  if (opened === undefined) opened = createPool(process.env['DATABASE_URL'] ?? '', POLICY);";

describe('instance.ts connects the way the project does', () => {
  it('a URL variable: the same createPool line on it, saying which file:line it mirrors', () => {
    const text = renderInstance('express', undefined, 'postgres', true, PG_URL);
    expect(text).toContain("// As your database client connects (src/db.ts:3): POSTGRES_URL is the PostgreSQL server the store migration ran on.\n");
    expect(text).toContain("  if (opened === undefined) opened = createPool(process.env['POSTGRES_URL'] ?? '', POLICY);");
    expect(text).not.toContain('DATABASE_URL');
  });

  it('parts: an options object of the same variables, in every instance module (Koa, Hono, plain, Next reuse it)', () => {
    const pool = `opened = createPool(
  {
    host: process.env['MYSQL_HOST'],
    port: process.env['MYSQL_PORT'],
    user: process.env['MYSQL_USER'],
    password: process.env['MYSQL_PASSWORD'],
    database: process.env['MYSQL_DATABASE'],
  },
  POLICY,
);`;
    for (const text of [
      renderInstance('fastify', undefined, 'mysql', true, KNEX),
      renderMiddlewareInstance('koa', undefined, 'mysql', true, KNEX),
      renderMiddlewareInstance('hono', undefined, 'mysql', false, KNEX),
      renderPlainInstance('mysql', true, KNEX),
      renderNextInstance(false, 'mysql', undefined, true, KNEX),
    ]) {
      expect(text).toContain(pool);
      expect(text).toContain('// As your database client connects (src/plugins/external/knex.ts:12), from the same variables: the MySQL / MariaDB server the store\n// migration ran on.\n');
    }
    // Only the parts the project sets; pg's own PG* variables fill the rest.
    const parts = instancePool('postgres', false, PG_PARTS);
    expect(parts).toContain("  {\n    host: process.env['DB_HOST'],\n    port: process.env['DB_PORT'],\n    user: process.env['DB_USER'],\n    database: process.env['DB_NAME'],\n  },");
    expect(parts).toContain("// A part left unset falls back to pg's PGHOST / PGPORT / PGUSER / PGPASSWORD / PGDATABASE.");
  });

  it('falls back to DATABASE_URL exactly as today: nothing found, another kind, another store, the project\'s own DATABASE_URL', () => {
    for (const [store, connection] of [
      ['postgres', undefined],
      ['postgres', KNEX],
      ['mysql', PG_URL],
      ['mysql', { ...KNEX, host: undefined, user: undefined, url: 'DATABASE_URL' }],
    ] as const) {
      expect(instancePool(store, true, connection)).toBe(instancePool(store, true));
      expect(instancePool(store, true, connection)).toContain(TODAY);
    }
    expect(instancePool('redis', true, PG_URL)).toBe(instancePool('redis', true));
    expect(instancePool('sqlite', true, KNEX)).toBe(instancePool('sqlite', true));
  });

  it('a name that is not an identifier never reaches the code, and an unusual path stays out of the comment', () => {
    const hostile = { ...PG_URL, url: "X'] ?? require('child_process').execSync('id') ?? process.env['Y" };
    expect(instancePool('postgres', true, hostile)).toBe(instancePool('postgres', true));
    expect(instancePool('mysql', true, { ...KNEX, port: 'MYSQL PORT' })).toBe(instancePool('mysql', true));
    const comment = instancePool('postgres', true, { ...PG_URL, file: 'src/db.ts\nprocess.exit(1)' });
    expect(comment).toContain('// As your database client connects (your code): POSTGRES_URL');
    expect(comment).not.toContain('process.exit');
  });
});

describe('a Redis store connects to the Redis the project uses', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const project = async (files: Record<string, string>) => {
    const dir = await tempProject(files, 'idem-redis-');
    dirs.push(dir);
    return dir;
  };
  /** The URL the printed createPool line computes, with these variables set. */
  const urlOf = (text: string, env: Record<string, string>) => {
    const expression = /createPool\(\s*([\s\S]*?),\s*POLICY/.exec(text)?.[1];
    return new Function('process', `return ${expression};`)({ env }) as string;
  };

  it("orders-bullmq's BullMQ connection object (REDIS_HOST, REDIS_PORT): a URL made of the same variables, || as the code reads them", async () => {
    const dir = await project({
      'package.json': '{ "name": "orders" }',
      'src/connection.ts': "const connection = {\n  host: process.env.REDIS_HOST || 'localhost',\n  port: Number(process.env.REDIS_PORT) || 6379,\n};\nexport default connection;\n",
      // Upstash's REST endpoint is no Redis protocol; the scaffold's own files are not the project's.
      'src/cache.ts': 'export const rest = process.env.UPSTASH_REDIS_REST_URL;\n',
      'src/idempotency/x.ts': 'export const u = process.env.OTHER_REDIS_URL;\n',
    });
    const { findRedisConnection } = await import('../../src/inspect/stack/redisConnection.js');
    const found = await findRedisConnection(dir, 'src/idempotency');
    expect(found).toEqual({ store: 'redis', host: 'REDIS_HOST', port: 'REDIS_PORT', file: 'src/connection.ts', line: 1 });
    const text = instancePool('redis', true, found);
    expect(text).toContain('// As your code connects to Redis (src/connection.ts:1), from the same variables: the server the keys live on.');
    expect(urlOf(text, { REDIS_HOST: 'redis', REDIS_PORT: '6380' })).toBe('redis://redis:6380');
    expect(urlOf(text, { REDIS_HOST: '' })).toBe('redis://127.0.0.1:6379');
    const secret = instancePool('redis', false, { ...found!, password: 'REDIS_PASSWORD' });
    expect(urlOf(secret, { REDIS_HOST: 'cache', REDIS_PASSWORD: 'p@ss:w/rd' })).toBe('redis://:p%40ss%3Aw%2Frd@cache:6379');
    expect(secret).not.toContain('lazyConnect');
  });

  it('settings written in the code are pointed at, never copied (itaminul/Doctor-Management-System@c63df53)', async () => {
    const dir = await project({
      'package.json': '{ "name": "clinic" }',
      'src/data-source.ts': "import { DataSourceOptions } from 'typeorm';\nexport const AppDataSource: DataSourceOptions = {\n  type: 'mysql',\n  host: '192.168.0.106',\n  password: 'secret',\n};\n",
    });
    const { writtenConnectionAt } = await import('../../src/inspect/stack/findStoreConnection.js');
    expect(await writtenConnectionAt(dir, 'mysql')).toEqual({ file: 'src/data-source.ts', line: 4 });
    expect(await writtenConnectionAt(dir, 'postgres')).toBeUndefined();
  });

  it("a package's own connection comes before one elsewhere in the repository", async () => {
    const dir = await project({
      'package.json': '{ "name": "root" }',
      'src/queue.ts': 'export const url = process.env.ROOT_REDIS_URL;\n',
      'worker/package.json': '{ "name": "worker" }',
      'worker/src/redis.ts': 'export const options = { host: process.env.WORKER_REDIS_HOST, port: Number(process.env.WORKER_REDIS_PORT) };\n',
    });
    const { findRedisConnection } = await import('../../src/inspect/stack/redisConnection.js');
    expect(await findRedisConnection(dir, 'worker/src/idempotency', 'worker')).toMatchObject({ host: 'WORKER_REDIS_HOST', port: 'WORKER_REDIS_PORT', file: 'worker/src/redis.ts' });
    expect(await findRedisConnection(dir)).toMatchObject({ url: 'ROOT_REDIS_URL', file: 'src/queue.ts' });
  });

  it('a URL variable of its own is read; REDIS_URL and names that are not identifiers keep the default line', async () => {
    const dir = await project({ 'package.json': '{ "name": "w" }', 'src/queue.ts': "import IORedis from 'ioredis';\nexport const redis = new IORedis(process.env['BULL_REDIS_URL']!);\n" });
    const { findRedisConnection } = await import('../../src/inspect/stack/redisConnection.js');
    const found = await findRedisConnection(dir);
    expect(found).toEqual({ store: 'redis', url: 'BULL_REDIS_URL', file: 'src/queue.ts', line: 2 });
    expect(urlOf(instancePool('redis', true, found), { BULL_REDIS_URL: 'redis://q:6379/2' })).toBe('redis://q:6379/2');
    expect(instancePool('redis', true, { ...found!, url: 'REDIS_URL' })).toBe(instancePool('redis', true));
    expect(instancePool('redis', true, { ...found!, url: "X'] + require('child_process')" })).toBe(instancePool('redis', true));
  });
});

describe('apply reads the connection from the project', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('a Fastify app on MySQL whose knex plugin reads fastify.config.MYSQL_*: instance.ts reads the same variables', async () => {
    const fixture = await copyFixture('fastify', (text) => text.replace('"database": "postgres"', '"database": "mysql"'));
    dirs.push(fixture.dir);
    // src/db.ts opens a pg pool on DATABASE_URL: PostgreSQL, not this store's kind, so it is not what the store mirrors.
    await mkdir(path.join(fixture.dir, 'src/plugins'), { recursive: true });
    await writeFile(
      path.join(fixture.dir, 'src/plugins/knex.ts'),
      "import knex from 'knex';\n\nexport const autoConfig = (fastify: { config: Record<string, string> }) => ({\n  client: 'mysql2',\n  connection: {\n    host: fastify.config.MYSQL_HOST,\n    user: fastify.config.MYSQL_USER,\n    password: fastify.config.MYSQL_PASSWORD,\n    database: fastify.config.MYSQL_DATABASE,\n    port: Number(fastify.config.MYSQL_PORT),\n  },\n});\n\nexport const open = (fastify: { config: Record<string, string> }) => knex(autoConfig(fastify));\n",
    );
    const result = await runApply({ cwd: fixture.dir, yes: true, quiet: true }, { interactive: false });
    expect(result.stale).toEqual([]);
    const instance = await readFile(path.join(fixture.dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('// As your database client connects (src/plugins/knex.ts:3), from the same variables: the MySQL / MariaDB server the store\n');
    expect(instance).toContain("    host: process.env['MYSQL_HOST'],\n    port: process.env['MYSQL_PORT'],\n    user: process.env['MYSQL_USER'],\n    password: process.env['MYSQL_PASSWORD'],\n    database: process.env['MYSQL_DATABASE'],\n");
    expect(instance).not.toContain('DATABASE_URL');
  }, 300_000);
});

const mysqlSkip = await mysqlSkipReason();
const postgresSkip = await postgresSkipReason();
if (mysqlSkip) console.warn(`MariaDB connection test skipped: ${mysqlSkip}`);
if (postgresSkip) console.warn(`PostgreSQL connection test skipped: ${postgresSkip}`);

/**
 * The scaffold generate writes for `database`, with a module holding the instance's own pool lines (as apply renders
 * them) under .tmp in the repository, where pg and mysql2 resolve.
 */
async function scaffoldWithPool(database: 'mysql' | 'postgres', connection: StoreConnection): Promise<string> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `dbconn-${database}-`));
  const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/apply/fastify/idempotency.config.json'), 'utf8')) as { stack: Record<string, unknown> };
  raw.stack['database'] = database;
  const config = parseConfig(JSON.stringify(raw));
  const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z') });
  for (const file of generateScaffold(model, { dir: 'scaffold' })) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  await writeFile(path.join(dir, 'scaffold/connect.ts'), `import { createPool, POLICY } from './index.js';\n\n${instancePool(database, false, connection)}\n`);
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, noEmit: true, types: ['node'] };
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['scaffold/**/*.ts'], exclude: ['scaffold/**/*.test.ts'] }));
  // The pool and its call under exactOptionalPropertyTypes too: the parts are `string | undefined` from process.env.
  await writeFile(path.join(dir, 'scaffold/connectExact.ts'), `import { createPool } from './pool.js';\n\n${instancePool(database, false, connection).replace('POLICY', '{ acquireTimeoutMs: 1_000, statementTimeoutMs: 1_000 }')}\n`);
  await mkdir(path.join(dir, 'exact'));
  await writeFile(path.join(dir, 'exact/tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, exactOptionalPropertyTypes: true }, files: ['../scaffold/pool.ts', '../scaffold/connectExact.ts'] }));
  return dir;
}

/** Sets these environment variables for the duration of `run`, then puts back what was there. */
async function withEnv<T>(values: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  try {
    return await run();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('the generated pool built from parts connects to the real servers', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(mysqlSkip !== undefined)('MariaDB: the fastify/demo variables (MYSQL_HOST, MYSQL_PORT, …) reach a database of its own', async () => {
    const dir = await scaffoldWithPool('mysql', KNEX);
    dirs.push(dir);
    expect(await compile(dir)).toBe('');
    expect(await compile(path.join(dir, 'exact'))).toBe('');
    const name = `dbconn_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const admin = await mysql.createConnection({ uri: MYSQL_URL });
    await admin.query(`CREATE DATABASE \`${name}\``);
    try {
      const server = new URL(MYSQL_URL);
      const env = { MYSQL_HOST: server.hostname, MYSQL_PORT: server.port || '3306', MYSQL_USER: decodeURIComponent(server.username), MYSQL_PASSWORD: decodeURIComponent(server.password), MYSQL_DATABASE: name };
      const rows = await withEnv(env, async () => {
        const { pool } = (await import(pathToFileURL(path.join(dir, 'scaffold/connect.ts')).href)) as { pool: mysql.Pool };
        try {
          const [result] = await pool.query('SELECT DATABASE() AS db, CURRENT_USER() AS who');
          return result as Array<{ db: string; who: string }>;
        } finally {
          await pool.end();
        }
      });
      expect(rows[0]?.db).toBe(name);
      expect(rows[0]?.who.startsWith(`${env.MYSQL_USER}@`)).toBe(true);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    }
  }, 300_000);

  it.skipIf(postgresSkip !== undefined)('PostgreSQL: DB_HOST / DB_PORT / DB_USER / DB_NAME reach a database of its own', async () => {
    const dir = await scaffoldWithPool('postgres', PG_PARTS);
    dirs.push(dir);
    expect(await compile(dir)).toBe('');
    expect(await compile(path.join(dir, 'exact'))).toBe('');
    const name = `dbconn_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const server = new URL(DATABASE_URL);
      const env = { DB_HOST: server.hostname, DB_PORT: server.port || '5432', DB_USER: decodeURIComponent(server.username), DB_NAME: name };
      const row = await withEnv(env, async () => {
        const { pool } = (await import(pathToFileURL(path.join(dir, 'scaffold/connect.ts')).href)) as { pool: pg.Pool };
        try {
          const result = await pool.query<{ db: string; who: string; timeout: string }>("SELECT current_database() AS db, current_user AS who, current_setting('statement_timeout') AS timeout");
          return result.rows[0];
        } finally {
          await pool.end();
        }
      });
      expect(row?.db).toBe(name);
      expect(row?.who).toBe(env.DB_USER);
      // The parts go with the pool's own limits, not instead of them.
      expect(row?.timeout).not.toBe('0');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    }
  }, 300_000);
});
