import type { Server } from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOVED_WRITES } from '../../src/apply/claimWrites.js';
import { runApply } from '../../src/cli/apply.js';
import { loadConfig } from '../../src/config/load.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createMysqlDatabase, mysqlSkipReason } from '../scaffold/storeContract/services.js';
import { createAppSchema } from './blackBox.js';
import { applyFirst, compile, copyFixture, listening, snapshotTree, type FixtureCopy, type Running } from './fixtureApp.js';

const NOW = new Date('2026-01-15T00:00:00Z');

/**
 * generate's scaffold for the config and code as they stand, with the code facts generate reads (they put a handler
 * writing through its own pool in lease mode): the mode the design gives the action.
 */
async function regenerate(dir: string): Promise<'transactional' | 'lease'> {
  const { config } = await loadConfig(dir);
  const { actionFacts } = await auditProject(dir, { config });
  const model = buildDesign(config, undefined, { now: NOW, code: actionFacts });
  for (const file of generateScaffold(model, { dir: config.scaffold === false ? 'src/idempotency' : config.scaffold.dir })) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  return model.actions[0]!.mode;
}

/** A running app: its base URL and how to stop it. */
/** A store's database for the fixture: the store's migration and the notes table, a row counter and its drop. */
interface Database {
  readonly url: string;
  count(title: string): Promise<number>;
  drop(): Promise<void>;
}

/** The store side of a fixture: its skip reason, the client type and the statements apply leaves in and out of the handler. */
interface Store {
  readonly label: string;
  readonly skip: () => Promise<string | undefined>;
  readonly client: string;
  readonly moved: RegExp;
  readonly kept: string;
  readonly database: (label: string, migration: string) => Promise<Database>;
}

export const POSTGRES: Store = {
  label: 'PostgreSQL (pg)',
  skip: postgresSkipReason,
  client: 'PoolClient',
  moved: /await db\.query/g,
  kept: "await pool.query('SELECT id, title FROM notes WHERE id = $1'",
  database: async (label, migration) => {
    const schema = await createAppSchema(label, migration, 'CREATE TABLE notes (id serial PRIMARY KEY, title text NOT NULL)');
    return { url: schema.url, count: async (title) => (await schema.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM notes WHERE title = $1', [title])).rows[0]!.n, drop: () => schema.drop() };
  },
};

export const MYSQL: Store = {
  label: 'MySQL / MariaDB (mysql2)',
  skip: mysqlSkipReason,
  client: 'PoolConnection',
  moved: /await db\.(execute|query)/g,
  kept: "await pool.query<RowDataPacket[]>('SELECT id, title FROM notes WHERE id = ?'",
  database: async (label, migration) => {
    const { default: mysql } = await import('mysql2/promise');
    process.env['IDEMPOTENCY_STORE'] = 'database';
    const database = await createMysqlDatabase(label, `${migration.trimEnd().replace(/;$/, '')};\nCREATE TABLE notes (id int AUTO_INCREMENT PRIMARY KEY, title varchar(200) NOT NULL);`);
    const admin = mysql.createPool({ uri: database.url, connectionLimit: 2 });
    return {
      url: database.url,
      count: async (title) => Number((await admin.query<RowDataPacket[]>('SELECT count(*) AS n FROM notes WHERE title = ?', [title]))[0][0]!['n']),
      drop: async () => {
        await admin.end();
        await database.drop();
      },
    };
  },
};

/** One framework's fixture on one store: the line apply binds, and how the compiled app (dist/src/app.js) is served. */
export interface Framework {
  readonly label: string;
  readonly fixture: string;
  readonly store: Store;
  readonly binding: string;
  readonly serve: (app: Record<string, unknown>) => Promise<Running>;
}

/** An app whose createApp() returns something that listens like node:http (Express, Koa). */
export const serveListening = (app: Record<string, unknown>) => listening((app['createApp'] as () => { listen(port: number, host: string): Server })().listen(0, '127.0.0.1'));

/**
 * apply on one framework's fixture: the handler's own writes move onto the claim's transaction, the mode follows, a
 * second apply changes nothing, and the app then rolls a failed attempt's insert back with its claim.
 */
export async function describeClaimWrites(framework: Framework): Promise<void>{
  const skip = await framework.store.skip();
  if (skip) console.warn(`skipped: ${skip}`);

  describe.skipIf(skip !== undefined)(`apply moves a ${framework.label} handler's own ${framework.store.label} writes onto the claim's transaction`, () => {
    let copy: FixtureCopy;
    let database: Database | undefined;

    beforeAll(async () => {
      copy = await copyFixture(framework.fixture);
      // As init leaves it: the handler writes through the project's own pool, so the scaffold runs it in lease mode.
      expect(await regenerate(copy.dir)).toBe('lease');
    });
    afterAll(async () => {
      await database?.drop();
      await copy?.remove();
    });

    it('rewrites the handler, sets the mode, type-checks, and a second apply changes nothing', async () => {
      const first = await applyFirst(copy.dir);
      expect(first.stale).toEqual([]);
      expect(first.edits.filter((e) => e.summary.startsWith(MOVED_WRITES)).map((e) => [e.action, e.file])).toEqual([['createNote', 'src/routes/notes.ts']]);
      expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/claimTransaction.ts', 'src/idempotency/instance.ts', 'src/routes/notes.ts']);
      expect(first.sources?.transactional).toEqual(['createNote']);
      const routes = await readFile(path.join(copy.dir, 'src/routes/notes.ts'), 'utf8');
      expect(routes).toContain(framework.binding);
      // The insert and the read in the handler move; the GET route, not protected, keeps the pool.
      expect(routes.match(framework.store.moved)).toHaveLength(2);
      expect(routes).toContain(framework.store.kept);
      expect(await readFile(path.join(copy.dir, 'src/idempotency/claimTransaction.ts'), 'utf8')).toContain(`): ${framework.store.client} | undefined {`);
      const { config } = await loadConfig(copy.dir);
      expect(config.actions[0]?.mode).toBe('transactional');
      const record = JSON.parse(await readFile(path.join(copy.dir, '.idempotency-builder/apply.json'), 'utf8')) as unknown;
      expect(JSON.stringify(record)).toContain(MOVED_WRITES);

      // After generate, the design says transactional, and the code facts see the handler on the claim's transaction.
      expect(await regenerate(copy.dir)).toBe('transactional');
      const { actionFacts } = await auditProject(copy.dir, { config });
      expect(actionFacts[0]?.claimTransaction).toBe(true);
      expect(buildDesign(config, undefined, { now: NOW, code: actionFacts }).actions[0]!.modeReason).toMatch(/^Transactional/);

      expect(await compile(copy.dir)).toBe('');
      const before = await snapshotTree(copy.dir);
      const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(again.sources).toBeUndefined();
      expect(again.written).toBe(false);
      expect(await snapshotTree(copy.dir)).toEqual(before);
    }, 300_000);

    it("rolls the failed attempt's insert back with its claim, and 20 concurrent duplicates insert one row", async () => {
      database = await framework.store.database(framework.fixture.replaceAll('-', ''), copy.migration);
      process.env['DATABASE_URL'] = database.url;
      const dist = pathToFileURL(path.join(copy.dir, 'dist/src')).href;
      const app = (await import(`${dist}/app.js`)) as Record<string, unknown>;
      const { pool } = (await import(`${dist}/db.js`)) as { pool: { end(): Promise<void> } };
      const { closeIdempotency } = (await import(`${dist}/idempotency/instance.js`)) as { closeIdempotency?: () => Promise<void> };
      const running = await framework.serve(app);
      try {
        const post = (key: string, title: string, fail = false) =>
          fetch(`${running.url}/notes`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-user-id': 'u1', ...(fail ? { 'x-fail-after-insert': '1' } : {}) }, body: JSON.stringify({ title }) });
        const count = (title: string) => database!.count(title);

        // The first attempt inserts, then fails: its row goes with the claim's rollback.
        const failing = await post('key-fail', 'second', true);
        expect(failing.status).toBeGreaterThanOrEqual(500);
        expect(await count('second')).toBe(0);
        const retry = await post('key-fail', 'second');
        expect(retry.status).toBe(201);
        // The handler's read ran in the same transaction and saw its own insert.
        expect(((await retry.json()) as { sameTitle: number }).sameTitle).toBe(1);
        expect(await count('second')).toBe(1);
        const replay = await post('key-fail', 'second');
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(await count('second')).toBe(1);

        const statuses = await Promise.all(Array.from({ length: 20 }, () => post('key-burst', 'burst').then((r) => r.status)));
        expect(statuses.every((s) => s === 201 || s === 409 || s === 503), statuses.join(',')).toBe(true);
        expect(statuses).toContain(201);
        expect(await count('burst')).toBe(1);
      } finally {
        await running.close();
        await pool.end();
        await closeIdempotency?.();
      }
    }, 120_000);
  });
}
