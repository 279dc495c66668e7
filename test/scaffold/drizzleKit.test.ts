import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { migrate as migrateMysql } from 'drizzle-orm/mysql2/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGenerate } from '../../src/cli/generate.js';
import { ROOT } from './generateInto.js';
import { postgresSkipReason, throwawaySchema } from './harness.js';
import { MYSQL_URL, mysqlSkipReason, throwaway } from './storeContract/services.js';

/**
 * Issue #15 with the real drizzle-kit: `generate` in a project with drizzle.config (and a first migration drizzle-kit
 * wrote, or none yet) adds the store's migration, journal entry, snapshot and schema module; `generate --check` and a
 * rerun find nothing to change; drizzle-kit then finds no schema change to generate, its `check` finds the snapshot
 * chain sound, and drizzle-orm's migrator applies the migrations to PostgreSQL and MariaDB.
 */
const run = promisify(execFile);
const KIT = path.join(ROOT, 'node_modules/drizzle-kit/bin.cjs');
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function kit(root: string, ...args: string[]): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [KIT, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, timeout: 240_000 });
  return `${stdout}${stderr}`;
}

const USERS = {
  postgresql: "import { integer, pgTable, text } from 'drizzle-orm/pg-core';\n\nexport const users = pgTable('users', { id: integer('id').primaryKey(), name: text('name').notNull() });\n",
  mysql: "import { int, mysqlTable, text } from 'drizzle-orm/mysql-core';\n\nexport const users = mysqlTable('users', { id: int('id').primaryKey(), name: text('name').notNull() });\n",
};

/** A project with drizzle.config and idempotency.config.json; with `users`, a users table and drizzle-kit's migration for it. */
async function project(dialect: 'postgresql' | 'mysql', database: string, users: boolean): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-wt-drizzle-kit-'));
  roots.push(root);
  await mkdir(path.join(root, 'src/db'), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'api', type: 'module', dependencies: { 'drizzle-orm': '0.45.4' }, devDependencies: { 'drizzle-kit': '0.31.11' } }));
  await writeFile(path.join(root, 'drizzle.config.ts'), `import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  dialect: '${dialect}',\n  schema: './src/db/*.ts',\n  out: './drizzle',\n});\n`);
  const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as { stack: Record<string, unknown> };
  config.stack['database'] = database;
  await writeFile(path.join(root, 'idempotency.config.json'), JSON.stringify(config, null, 2));
  if (users) {
    await writeFile(path.join(root, 'src/db/users.ts'), USERS[dialect]);
    await kit(root, 'generate', '--name', 'init');
  }
  return root;
}

/** What a real `generate` would still change (create, update, remove) in the project. */
const pending = async (root: string, check = false) => (await runGenerate({ cwd: root, quiet: true, check })).plan.filter((item) => item.action !== 'unchanged').map((item) => `${item.action} ${item.path}`);

const skips = { postgresql: '', mysql: '' };
beforeAll(async () => {
  skips.postgresql = (await postgresSkipReason()) ?? '';
  skips.mysql = (await mysqlSkipReason()) ?? '';
  for (const [name, reason] of Object.entries(skips)) if (reason) console.warn(`drizzleKit.test.ts: skipping the ${name} migrate step: ${reason}`);
});

describe.each([
  ['postgresql', 'postgres', true],
  ['mysql', 'mysql', true],
  ['postgresql', 'postgres', false],
  ['mysql', 'mysql', false],
] as const)('drizzle-kit (%s) after our generate (a user migration before ours: %s)', (dialect, database, users) => {
  it('generates nothing more, keeps the snapshot chain, and the migrator applies the store migration', async () => {
    const root = await project(dialect, database, users);
    const before = users ? (JSON.parse(await readFile(path.join(root, 'drizzle/meta/0000_snapshot.json'), 'utf8')) as { id: string; version: string }) : undefined;

    expect(await pending(root)).toContain(`create drizzle/meta/000${users ? 1 : 0}_snapshot.json`);
    const ours = `drizzle/meta/000${users ? 1 : 0}_snapshot.json`;
    const written = await readFile(path.join(root, ours), 'utf8');
    const snapshot = JSON.parse(written) as { id: string; prevId: string; version: string; dialect: string; tables: Record<string, unknown> };
    expect(snapshot.prevId).toBe(before?.id ?? '00000000-0000-0000-0000-000000000000');
    expect(snapshot.version).toBe(before?.version ?? { postgresql: '7', mysql: '5' }[dialect]);
    expect(snapshot.dialect).toBe(dialect);
    expect(Object.keys(snapshot.tables).length).toBe(users ? 3 : 2);

    // generate --check and a rerun find nothing to change: the snapshot (and its random id) is kept as written.
    expect(await pending(root, true)).toEqual([]);
    expect(await pending(root)).toEqual([]);
    expect(await readFile(path.join(root, ours), 'utf8')).toBe(written);

    // The user's next `drizzle-kit generate` sees the store's tables as migrated already.
    const listing = await readdir(path.join(root, 'drizzle'));
    expect(await kit(root, 'generate')).toContain('No schema changes');
    expect(await readdir(path.join(root, 'drizzle'))).toEqual(listing);
    expect(await kit(root, 'check')).toContain("Everything's fine");

    if (skips[dialect]) return;
    const migrationsFolder = path.join(root, 'drizzle');
    if (dialect === 'postgresql') {
      const schema = await throwawaySchema(throwaway('wt_drizzle'), 2);
      try {
        await migratePg(drizzlePg(schema.pool), { migrationsFolder, migrationsSchema: schema.name });
        await expectStoreWorks((sql, params) => schema.pool.query(sql, params).then((result) => result.rows as Array<Record<string, unknown>>), '$');
      } finally {
        await schema.drop();
      }
    } else {
      const name = throwaway('wt_drizzle');
      const admin = await mysql.createConnection({ uri: MYSQL_URL });
      await admin.query(`CREATE DATABASE \`${name}\``);
      const url = new URL(MYSQL_URL);
      url.pathname = `/${name}`;
      const connection = await mysql.createConnection({ uri: url.toString() });
      try {
        await migrateMysql(drizzleMysql(connection), { migrationsFolder });
        await expectStoreWorks((sql, params) => connection.query(sql, params).then(([rows]) => rows as Array<Record<string, unknown>>), '?');
      } finally {
        await connection.end();
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
        await admin.end();
      }
    }
  }, 600_000);
});

/** A claim row, a saga step under it, and the cascade: the tables, defaults and foreign key the migration made. */
async function expectStoreWorks(query: (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>, style: '$' | '?'): Promise<void> {
  const p = (n: number) => (style === '$' ? `$${n}` : '?');
  const lease = style === '$' ? "now() + interval '30 seconds'" : 'NOW(3) + INTERVAL 30 SECOND';
  const expires = style === '$' ? "now() + interval '1 day'" : 'NOW(3) + INTERVAL 1 DAY';
  const extra = style === '$' ? '' : ', fencing_token, created_at';
  const extraValues = style === '$' ? '' : `, ${p(6)}, NOW(3)`;
  await query(
    `INSERT INTO idempotency_store (scope, ${style === '$' ? 'key' : '`key`'}, action, fingerprint, fingerprint_alg, locked_until, expires_at${extra}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${lease}, ${expires}${extraValues})`,
    ['global', 'k-1', 'charge', 'f'.repeat(64), 'sha256-v1', ...(style === '$' ? [] : ['00000000-0000-0000-0000-000000000001'])],
  );
  const [row] = await query(`SELECT status, attempts, fencing_token FROM idempotency_store WHERE scope = ${p(1)}`, ['global']);
  expect(row).toMatchObject({ status: 'PROCESSING', attempts: 1 });
  expect(row?.['fencing_token']).toBeTruthy();
  const key = style === '$' ? 'key' : '`key`';
  await query(`INSERT INTO idempotency_saga_steps (scope, ${key}, step_index, step_name, sub_key, status${style === '$' ? '' : ', updated_at'}) VALUES (${p(1)}, ${p(2)}, 0, 'charge', 'k-1_0', 'DONE'${style === '$' ? '' : ', NOW(3)'})`, ['global', 'k-1']);
  await query(`DELETE FROM idempotency_store WHERE scope = ${p(1)}`, ['global']);
  expect(await query(`SELECT * FROM idempotency_saga_steps WHERE scope = ${p(1)}`, ['global'])).toEqual([]);
}
