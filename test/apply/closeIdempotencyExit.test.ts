import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { renderInstance } from '../../src/apply/renderInstance.js';
import { DATABASE_URL, postgresSkipReason } from '../scaffold/harness.js';
import { generateAndCompile, modelFor, ROOT, type Generated } from '../scaffold/generateInto.js';
import { createMysqlDatabase, MYSQL_URL, mysqlSkipReason } from '../scaffold/storeContract/services.js';

const run = promisify(execFile);

/**
 * The app of issue #19 (fastify/demo: Fastify 5, a node:test suite that builds and closes one app per test), as a
 * child process on the instance apply writes. The store's pool is the module's, shared by every app the process
 * builds, so it must outlive an app's close: closing it there broke every later test of fastify/demo with 503 (tried
 * with IDEMPOTENCY_STORE=database). The child builds two apps one after the other (`apps`), the second after the first
 * was closed; it then either ends the pool itself (`close`: the process's own shutdown), does nothing more (`idle`:
 * the process must still end, as a test file does), or closes a store it never used (`memory`). Each must end by
 * itself: the test waits for its exit event, with no clock in the assertion.
 */
const APP = `import Fastify from 'fastify';
import { closeIdempotency, idempotency, pool } from './idempotency/instance.js';

const mode = process.argv[2];
// The app loads its environment only now, after the instance module was imported (NestJS's ConfigModule.forRoot(),
// dotenv called from a plugin): the pool must read it on first use, not at import.
if (mode === 'late') process.env['DATABASE_URL'] = process.env['LATE_DATABASE_URL'];
const build = async () => {
  const app = Fastify();
  await app.register(async (fastify) => {
    fastify.addHook('onRequest', async (request) => {
      Object.assign(request, { user: { id: 'guest-1' } });
    });
    fastify.post('/bookings', idempotency.createBooking, async (request, reply) => reply.code(201).send({ booked: true }));
  });
  return app;
};
const book = (app: Awaited<ReturnType<typeof build>>, key: string) =>
  app.inject({
    method: 'POST',
    url: '/bookings',
    headers: { 'idempotency-key': key },
    payload: { roomId: 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2 },
  });
const result: Record<string, unknown> = {};
if (mode !== 'memory') {
  const first = await build();
  const booked = await book(first, 'booking-close-1');
  const again = await book(first, 'booking-close-1');
  await first.close();
  // A second app of the same process (the next test) after the first was closed: the store still answers.
  const second = await build();
  const next = await book(second, 'booking-close-2');
  const replayed = await book(second, 'booking-close-1');
  await second.close();
  Object.assign(result, { first: booked.statusCode, replayed: again.headers['idempotent-replayed'], second: next.statusCode, secondReplayed: replayed.headers['idempotent-replayed'] });
}
if (mode === 'close' || mode === 'memory' || mode === 'late') {
  await closeIdempotency();
  result['pool'] = await Promise.resolve()
    .then(() => pool.query('SELECT 1'))
    .then(
      () => 'open',
      () => 'ended',
    );
  // Called again (two shutdown paths): ends nothing twice and does not throw.
  await closeIdempotency();
}
console.log(JSON.stringify(result));
`;

const TSCONFIG_EXTRA = { include: ['src'] };

interface Store {
  id: 'postgres' | 'mysql';
  skip: string | undefined;
  /** A throwaway schema / database named after this helper's test, holding the migration; its URL for the child. */
  create(migration: string): Promise<{ url: string; rows(): Promise<number>; drop(): Promise<void> }>;
}

const STORES: Store[] = [
  {
    id: 'postgres',
    skip: await postgresSkipReason(),
    async create(migration) {
      const name = `close_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${name}`);
      await admin.query(`SET search_path TO ${name}`);
      await admin.query(migration);
      await admin.end();
      const url = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${name}`)}`;
      const query = async <T,>(sql: string) => {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        try {
          return (await client.query(sql)).rows as T[];
        } finally {
          await client.end();
        }
      };
      return {
        url,
        rows: async () => (await query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}.idempotency_store`))[0]!.n,
        drop: async () => void (await query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)),
      };
    },
  },
  {
    id: 'mysql',
    skip: await mysqlSkipReason(),
    async create(migration) {
      const database = await createMysqlDatabase('close', migration);
      const rows = async () => {
        const connection = await mysql.createConnection({ uri: MYSQL_URL });
        try {
          const [result] = await connection.query(`SELECT count(*) AS n FROM \`${database.name}\`.idempotency_store`);
          return Number((result as Array<{ n: number }>)[0]!.n);
        } finally {
          await connection.end();
        }
      };
      return { url: database.url, rows, drop: () => database.drop() };
    },
  },
];

/** Runs the compiled app in a child process and resolves when it exits by itself, with its code and last line. */
async function runChild(dir: string, mode: string, env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; result: Record<string, unknown>; stderr: string }> {
  const child = spawn(process.execPath, [path.join(dir, 'dist/app.js'), mode], { cwd: dir, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return { code, signal, result: last.startsWith('{') ? (JSON.parse(last) as Record<string, unknown>) : {}, stderr };
}

describe.each(STORES)('the generated instance lets the process end on $id (issue #19)', { timeout: 300_000 }, (store) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  let app: { generated: Generated; url: string; rows(): Promise<number> } | undefined;
  const prepare = async () => {
    if (app) return app;
    const model = await modelFor('fastify-bookings-stripe', (raw) => {
      (raw['stack'] as Record<string, unknown>)['database'] = store.id;
    });
    const generated = await generateAndCompile(model, `close-${store.id}`);
    cleanup.push(() => rm(generated.dir, { recursive: true, force: true }));
    expect(generated.tscOutput).toBe('');
    await writeFile(path.join(generated.dir, 'src/idempotency/instance.ts'), renderInstance('fastify', undefined, store.id));
    await writeFile(path.join(generated.dir, 'src/app.ts'), APP);
    const tsconfig = JSON.parse(await readFile(path.join(generated.dir, 'tsconfig.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(generated.dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, ...TSCONFIG_EXTRA }, null, 2));
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', generated.dir], { cwd: generated.dir }).catch((error: { stdout?: string }) => {
      throw new Error(`the app with the generated instance does not compile:\n${error.stdout ?? String(error)}`);
    });
    const migration = generated.files.find((file) => file.role === 'ddl')!;
    const database = await store.create(await readFile(path.join(generated.dir, migration.path), 'utf8'));
    cleanup.push(() => database.drop());
    app = { generated, url: database.url, rows: database.rows };
    return app;
  };

  it.skipIf(store.skip !== undefined)('an app closed and another built in the same process both reach the store; the process\'s own closeIdempotency() ends the pool once, and it exits', async () => {
    const { generated, url, rows } = await prepare();
    const child = await runChild(generated.dir, 'close', { DATABASE_URL: url, IDEMPOTENCY_STORE: 'database' });
    expect(child.stderr).toBe('');
    expect({ code: child.code, signal: child.signal }).toEqual({ code: 0, signal: null });
    expect(child.result).toEqual({ first: 201, replayed: 'true', second: 201, secondReplayed: 'true', pool: 'ended' });
    expect(await rows()).toBe(2);
  });

  it.skipIf(store.skip !== undefined)('the pool opens on first use: an app that loads its environment after importing the instance reaches its store', async () => {
    const { generated, url } = await prepare();
    const child = await runChild(generated.dir, 'late', { DATABASE_URL: '', LATE_DATABASE_URL: url, IDEMPOTENCY_STORE: 'database' });
    expect(child.stderr).toBe('');
    expect({ code: child.code, signal: child.signal }).toEqual({ code: 0, signal: null });
    expect(child.result).toEqual({ first: 201, replayed: 'true', second: 201, secondReplayed: 'true', pool: 'ended' });
  });

  it.skipIf(store.skip !== undefined)('a process that never ends the pool still exits once its store connections are idle', async () => {
    const { generated, url } = await prepare();
    const child = await runChild(generated.dir, 'idle', { DATABASE_URL: url, IDEMPOTENCY_STORE: 'database' });
    expect(child.stderr).toBe('');
    expect({ code: child.code, signal: child.signal }).toEqual({ code: 0, signal: null });
    expect(child.result).toEqual({ first: 201, replayed: 'true', second: 201, secondReplayed: 'true' });
  });

  it.skipIf(store.skip !== undefined)('under the memory store the pool never connected, and closing it still ends cleanly', async () => {
    const { generated } = await prepare();
    // A URL nothing listens on: closing must not try to reach it.
    const nowhere = store.id === 'postgres' ? 'postgres://postgres@127.0.0.1:1/none' : 'mysql://root@127.0.0.1:1/none';
    const child = await runChild(generated.dir, 'memory', { DATABASE_URL: nowhere, IDEMPOTENCY_STORE: 'memory' });
    expect(child.stderr).toBe('');
    expect({ code: child.code, signal: child.signal }).toEqual({ code: 0, signal: null });
    expect(child.result).toEqual({ pool: 'ended' });
  });
});
