import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldProject } from '../../src/scaffold/index.js';
import { detectMigrationTool } from '../../src/scaffold/migrationTools/detectMigrationTool.js';
import { renderToolMigration } from '../../src/scaffold/migrationTools/renderToolMigration.js';
import { modelFor } from './generateInto.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-migrations-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

const DDL = 'CREATE TABLE IF NOT EXISTS idempotency_keys (scope text);\n';
const render = async (root: string, language: 'typescript' | 'javascript' = 'typescript', moduleSystem: 'esm' | 'commonjs' = 'esm') =>
  renderToolMigration({ tool: await detectMigrationTool(root, ''), ddl: DDL, table: 'idempotency_keys', stepTable: 'idempotency_steps', language, moduleSystem });

describe('the store migration goes where the project keeps migrations, in its tool format', () => {
  it('Prisma: the schema the scripts name, or the only one in the tree; `db push` without migrations gets the models alone', async () => {
    // gitroomhq/postiz-app: every dependency at the root, the schema in a shared library, applied with db push.
    const schema = 'datasource db {\n  provider = "postgresql"\n  url      = env("DATABASE_URL")\n}\n';
    const scripts = { 'prisma-db-push': 'pnpm dlx prisma@6.5.0 db push --accept-data-loss --schema ./libraries/db/src/prisma/schema.prisma' };
    const pushed = await repo({ 'package.json': JSON.stringify({ scripts, dependencies: { '@prisma/client': '6.5.0' } }), 'libraries/db/src/prisma/schema.prisma': schema });
    const tool = await detectMigrationTool(pushed, '');
    expect(tool).toMatchObject({ kind: 'prisma', folder: 'libraries/db/src/prisma/migrations', push: true, schema: { path: 'libraries/db/src/prisma/schema.prisma' } });
    // A migration.sql would never run: only the models appended to the schema (scaffoldProject's trial shows them).
    expect((await render(pushed)).filter((f) => f.path.endsWith('migration.sql'))).toEqual([]);
    // No script names it: the one schema.prisma in the tree, with migrate (a migrations folder beside it).
    const found = await repo({ 'package.json': '{"dependencies":{"@prisma/client":"6.5.0"}}', 'packages/db/schema.prisma': schema, 'packages/db/migrations/20240101000000_init/migration.sql': '' });
    expect(await detectMigrationTool(found, '')).toMatchObject({ kind: 'prisma', folder: 'packages/db/migrations', existing: ['20240101000000_init'] });
    expect((await detectMigrationTool(found, '')).kind === 'prisma' && (await detectMigrationTool(found, '') as { push?: true }).push).toBeFalsy();
  });

  it('Prisma: a migration folder after the newest one, migration.sql inside', async () => {
    const root = await repo({ 'package.json': '{"dependencies":{"@prisma/client":"5.0.0"}}', 'prisma/schema.prisma': '', 'prisma/migrations/20240301120000_init/migration.sql': '' });
    const [file] = await render(root);
    expect(file!.path).toBe('prisma/migrations/20240301120001_idempotency/migration.sql');
    expect(file!.contents).toContain(DDL);
  });

  it('Prisma: an idempotency migration already there keeps its name (stable across runs)', async () => {
    const root = await repo({ 'prisma/schema.prisma': '', 'prisma/migrations/20240301120001_idempotency/migration.sql': '', 'prisma/migrations/20250101000000_later/migration.sql': '' });
    expect((await render(root))[0]!.path).toBe('prisma/migrations/20240301120001_idempotency/migration.sql');
  });

  it('Knex: a TypeScript migration in the knexfile directory, up with the DDL and down dropping the tables', async () => {
    const root = await repo({ 'package.json': '{"dependencies":{"knex":"3.1.0"}}', 'knexfile.ts': "export default { migrations: { directory: './db/migrations' } };", 'db/migrations/20240101000000_users.ts': '' });
    const [file] = await render(root);
    expect(file!.path).toBe('db/migrations/20240101000001_idempotency.ts');
    expect(file!.contents).toContain("import type { Knex } from 'knex';");
    expect(file!.contents).toContain('export async function up(knex: Knex): Promise<void>');
    expect(file!.contents).toContain("'CREATE TABLE IF NOT EXISTS idempotency_keys (scope text);'");
    expect(file!.contents).toContain("await knex.raw('DROP TABLE IF EXISTS idempotency_steps');");
  });

  it('Knex in a CommonJS JavaScript project: module.exports, no export keyword', async () => {
    const root = await repo({ 'package.json': '{"dependencies":{"knex":"3.1.0"}}', 'knexfile.js': 'module.exports = {};' });
    const [file] = await render(root, 'javascript', 'commonjs');
    expect(file!.path).toBe('migrations/20260101000000_idempotency.js');
    expect(file!.contents).toContain('module.exports = { up, down };');
    expect(file!.contents).not.toMatch(/^export /m);
  });

  it('Knex as a query builder beside postgrator SQL files (fastify/demo): the next N.do/N.undo pair, not a Knex migration', async () => {
    const root = await repo({ 'package.json': '{"dependencies":{"knex":"3.1.0","postgrator":"8.0.0"}}', 'migrations/001.do.users.sql': '', 'migrations/001.undo.users.sql': '', 'migrations/005.do.user_roles.sql': '', 'migrations/005.undo.user_roles.sql': '' });
    const files = await render(root);
    expect(files.map((f) => f.path)).toEqual(['migrations/006.do.idempotency.sql', 'migrations/006.undo.idempotency.sql']);
    expect(files[0]!.contents).toContain(DDL);
    expect(files[0]!.role).toBe('ddl');
    // No sequence in this DDL (MySQL has none to drop): the undo drops the tables only.
    expect(files[1]!.contents).toContain('DROP TABLE IF EXISTS idempotency_steps;\nDROP TABLE IF EXISTS idempotency_keys;\n');
    expect(files[1]!.contents).not.toContain('SEQUENCE');
    // Written again later (more migrations since), the pair keeps its number.
    const later = await repo({ 'package.json': '{"dependencies":{"knex":"3.1.0"}}', 'migrations/006.do.idempotency.sql': '', 'migrations/006.undo.idempotency.sql': '', 'migrations/007.do.more.sql': '' });
    expect((await render(later)).map((f) => f.path)).toEqual(['migrations/006.do.idempotency.sql', 'migrations/006.undo.idempotency.sql']);
  });

  it('golang-migrate style up/down SQL files get an up and a down file', async () => {
    const root = await repo({ 'db/migrations/000001_init.up.sql': '', 'db/migrations/000001_init.down.sql': '' });
    expect((await render(root)).map((f) => f.path)).toEqual(['db/migrations/000002_idempotency.up.sql', 'db/migrations/000002_idempotency.down.sql']);
  });

  it('TypeORM: a migration class in the migrations folder', async () => {
    const root = await repo({ 'package.json': '{"dependencies":{"typeorm":"0.3.20"}}', 'src/migrations/1700000000000-Init.ts': '' });
    const [file] = await render(root);
    expect(file!.path).toBe('src/migrations/1700000000001-Idempotency.ts');
    expect(file!.contents).toContain('export class Idempotency1700000000001 implements MigrationInterface');
    expect(file!.contents).toContain("name = 'Idempotency1700000000001';");
  });

  it.each([
    [{ 'migrations/001_users.sql': '', 'migrations/002_orders.sql': '' }, 'migrations/003_idempotency.sql'],
    [{ 'db/migrations/V1__init.sql': '', 'db/migrations/V7__orders.sql': '' }, 'db/migrations/V8__idempotency.sql'],
  ])('plain SQL folder follows its naming (%#)', async (files, expected) => {
    expect((await render(await repo(files)))[0]!.path).toBe(expected);
  });

  it('no migration tool: nothing outside the scaffold folder', async () => {
    expect(await render(await repo({ 'package.json': '{}' }))).toEqual([]);
  });

  it('scaffoldProject adds the tool migration beside the scaffold and says where it is', async () => {
    const root = await repo({ 'package.json': '{"name":"api","dependencies":{"@prisma/client":"5.0.0"}}', 'prisma/schema.prisma': '', 'src/app.ts': '' });
    const model = await modelFor('express-stripe-payments');
    const project = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    const prisma = project.files.find((file) => file.path.startsWith('prisma/migrations/'));
    const own = project.files.find((file) => file.path === 'src/idempotency/migrations/001_create_idempotency_store.sql');
    expect(prisma?.path).toBe('prisma/migrations/20260101000000_idempotency/migration.sql');
    expect(prisma!.contents).toContain(own!.contents);
    expect(project.notes.some((note) => note.includes('prisma/migrations/20260101000000_idempotency/migration.sql'))).toBe(true);
  });
});
