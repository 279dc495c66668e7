import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runGenerate } from '../../src/cli/generate.js';
import { buildScaffoldView } from '../../src/scaffold/scaffoldView.js';
import { modelFor, ROOT } from './generateInto.js';
import type { Loose } from './harness.js';
import { runStoreContract } from './storeContract/contract.js';

/**
 * Issue #15, SQLite: a drizzle-orm + better-sqlite3 project (drizzle.config `dialect: 'sqlite'`, one table drizzle-kit
 * already migrated) gets the SQLite store's migration journaled with a snapshot and a sqliteTable schema module.
 * drizzle-kit itself then finds no schema change, a sound snapshot chain, and `drizzle-kit migrate` applies both
 * migrations to the database file; the scaffold's own store contract then runs on (copies of) that migrated file,
 * never on its own DDL, so the tables drizzle-kit made are the ones the store works on.
 */
const run = promisify(execFile);
const KIT = path.join(ROOT, 'node_modules/drizzle-kit/bin.cjs');
const USERS = "import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';\n\nexport const users = sqliteTable('users', { id: integer('id').primaryKey(), name: text('name').notNull() });\n";

async function kit(root: string, ...args: string[]): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [KIT, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, timeout: 240_000 });
  return `${stdout}${stderr}`;
}

// Under .tmp, so the generated modules resolve better-sqlite3 from this repository's node_modules as from the user's.
await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
const root = await mkdtemp(path.join(ROOT, '.tmp', 'drizzle-sqlite-'));
const copies = await mkdtemp(path.join(tmpdir(), 'wt_nestfault_drizzle_sqlite_'));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(copies, { recursive: true, force: true });
});
await mkdir(path.join(root, 'src/db'), { recursive: true });
await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'api', type: 'module', dependencies: { 'better-sqlite3': '12.0.0', 'drizzle-orm': '0.45.4' }, devDependencies: { 'drizzle-kit': '0.31.11' } }));
await writeFile(
  path.join(root, 'drizzle.config.ts'),
  "import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  dialect: 'sqlite',\n  schema: './src/db/*.ts',\n  out: './drizzle',\n  dbCredentials: { url: './app.db' },\n});\n",
);
await writeFile(path.join(root, 'src/db/users.ts'), USERS);
const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as { stack: Record<string, unknown> };
config.stack['database'] = 'sqlite';
await writeFile(path.join(root, 'idempotency.config.json'), JSON.stringify(config, null, 2));
await kit(root, 'generate', '--name', 'init');
const userSnapshot = JSON.parse(await readFile(path.join(root, 'drizzle/meta/0000_snapshot.json'), 'utf8')) as { id: string };

/** What a real `generate` would still change (create, update, remove) in the project. */
const pending = async (check = false) => (await runGenerate({ cwd: root, quiet: true, check })).plan.filter((item) => item.action !== 'unchanged').map((item) => `${item.action} ${item.path}`);
const firstRun = await pending();

describe('drizzle-kit (sqlite) after our generate', () => {
  it('journals the store migration after the user one, with a version 6 snapshot chained to it and a sqliteTable schema', async () => {
    expect(firstRun).toEqual(expect.arrayContaining(['create drizzle/0001_idempotency.sql', 'create drizzle/meta/0001_snapshot.json', 'update drizzle/meta/_journal.json', 'create src/db/idempotency.ts']));
    const journal = JSON.parse(await readFile(path.join(root, 'drizzle/meta/_journal.json'), 'utf8')) as { dialect: string; entries: Array<{ tag: string; version: string }> };
    expect(journal.dialect).toBe('sqlite');
    expect(journal.entries.map((entry) => [entry.tag, entry.version])).toEqual([
      ['0000_init', '6'],
      ['0001_idempotency', '6'],
    ]);
    const snapshot = JSON.parse(await readFile(path.join(root, 'drizzle/meta/0001_snapshot.json'), 'utf8')) as { prevId: string; version: string; dialect: string; tables: Record<string, unknown> };
    expect(snapshot).toMatchObject({ prevId: userSnapshot.id, version: '6', dialect: 'sqlite' });
    expect(Object.keys(snapshot.tables).sort()).toEqual(['idempotency_saga_steps', 'idempotency_store', 'users']);
    const schema = await readFile(path.join(root, 'src/db/idempotency.ts'), 'utf8');
    expect(schema).toContain("from 'drizzle-orm/sqlite-core'");
    expect(schema).toMatch(/sqliteTable\(\s*'idempotency_store'/);

    // generate --check and a rerun find nothing to change.
    expect(await pending(true)).toEqual([]);
    expect(await pending()).toEqual([]);
  }, 600_000);

  it('leaves drizzle-kit nothing to generate, a sound chain to check, and migrations it applies to the file', async () => {
    const listing = await readdir(path.join(root, 'drizzle'));
    expect(await kit(root, 'generate')).toContain('No schema changes');
    expect(await readdir(path.join(root, 'drizzle'))).toEqual(listing);
    expect(await kit(root, 'check')).toContain("Everything's fine");
    await kit(root, 'migrate');

    const db = new Database(path.join(root, 'app.db'), { readonly: true });
    try {
      const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string; sql: string }>;
      expect(tables.map((table) => table.name)).toEqual(['__drizzle_migrations', 'idempotency_saga_steps', 'idempotency_store', 'users']);
      // The store's own DDL ran, not a reconstruction: STRICT tables with their CHECK constraints.
      expect(tables.find((table) => table.name === 'idempotency_store')?.sql).toMatch(/CHECK \(status IN \('PROCESSING', 'COMPLETED', 'FAILED'\)\)[\s\S]*\) STRICT$/);
      expect((db.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(2);
    } finally {
      db.close();
    }
  }, 600_000);
});

// The scaffold's own store contract, on a fresh copy of the file drizzle-kit migrated for each subject. The copy is
// taken when a subject opens, after the migrate test above has run (vitest runs a file's tests in order).
const scaffoldDir = path.join(root, 'src/idempotency');
const load = async (module: string) => (await import(pathToFileURL(path.join(scaffoldDir, `${module}.ts`)).href)) as Record<string, Loose>;
const view = buildScaffoldView(await modelFor('express-stripe-payments', (raw) => ((raw.stack as Record<string, unknown>).database = 'sqlite')));
const { SqliteIdempotencyStore } = await load('sqliteStore');
const { createPool } = await load('pool');
const { deleteExpiredKeys } = await load('cleanup');
let copied = 0;
await runStoreContract({ view, load, remove: async () => undefined }, 'SQLite store on the file drizzle-kit migrated', async () => {
  const { table, stepTable } = view.policy;
  const file = path.join(copies, `store-${++copied}.db`);
  await copyFile(path.join(root, 'app.db'), file);
  const pool = createPool(file);
  const options = { table, stepTable, timeoutMs: 5_000 };
  return {
    store: new SqliteIdempotencyStore({ pool, ...options }),
    unavailable: async () => {
      const closed = createPool(path.join(copies, `closed-${copied}.db`));
      closed.end();
      return new SqliteIdempotencyStore({ pool: closed, ...options, timeoutMs: 200 });
    },
    cleanup: async () => (await deleteExpiredKeys({ pool, table, batchSize: 10 })).deleted,
    close: async () => pool.end(),
  };
});
