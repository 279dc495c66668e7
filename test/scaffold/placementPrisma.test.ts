import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldProject } from '../../src/scaffold/index.js';
import { ddlTables } from '../../src/scaffold/migrationTools/ddlTables.js';
import { modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);
const PRISMA = path.join(ROOT, 'node_modules/.bin/prisma');
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

const prismaMissing = await access(PRISMA).then(
  () => undefined,
  () => 'the prisma CLI is not installed (npm ci installs it as a devDependency)',
);
if (prismaMissing) {
  if (process.env['CI']) throw new Error(`${prismaMissing}. CI must run the Prisma validation.`);
  console.warn(`Prisma schema validation skipped: ${prismaMissing}`);
}

async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-prisma-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

const schemaOf = (provider: string) => `generator client {\n  provider = "prisma-client-js"\n}\n\ndatasource db {\n  provider = "${provider}"\n  url      = env("DATABASE_URL")\n}\n\nmodel User {\n  id    Int    @id @default(autoincrement())\n  email String @unique\n}\n`;

/**
 * `prisma validate` checks the schema with Prisma's own (WebAssembly) parser. The CLI still insists on a schema
 * engine binary it would download; validation never runs it, so a placeholder path keeps the test offline.
 */
async function prismaValidate(root: string, provider: string, schema = 'prisma/schema.prisma'): Promise<void> {
  const placeholder = path.join(root, 'no-schema-engine');
  await writeFile(placeholder, '', { mode: 0o755 });
  const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: placeholder, PRISMA_QUERY_ENGINE_LIBRARY: placeholder, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1', DATABASE_URL: `${provider}://localhost/unused` };
  await run(PRISMA, ['validate', '--schema', path.join(root, schema)], { cwd: root, env });
}

describe.each([
  ['postgresql', 'postgres'],
  ['mysql', 'mysql'],
])('Prisma (%s): the store as models in schema.prisma plus the migration folder', (provider, database) => {
  const model = () => modelFor('express-stripe-payments', (raw) => ((raw.stack as Record<string, unknown>).database = database));

  it('appends the models once, mapped to the DDL tables with the same columns, keys and indexes; validate passes', async () => {
    const root = await repo({ 'package.json': '{"name":"api","dependencies":{"@prisma/client":"6.19.0"}}', 'prisma/schema.prisma': schemaOf(provider), 'prisma/migrations/20240301120000_init/migration.sql': '', 'src/app.ts': '' });
    const project = await scaffoldProject({ root, model: await model(), dir: 'src/idempotency', packageManager: 'npm' });
    const schema = project.files.find((file) => file.path === 'prisma/schema.prisma');
    const migration = project.files.find((file) => file.path === 'prisma/migrations/20240301120001_idempotency/migration.sql');
    expect(migration).toBeDefined();
    expect(schema!.contents.startsWith(schemaOf(provider).trimEnd())).toBe(true);

    // Every DDL table is a model mapped to it, with every column (mapped by name) and every index by name.
    for (const table of ddlTables(migration!.contents)) {
      const body = new RegExp(`model \\w+ \\{([^}]*@@map\\("${table.name}"\\)[^}]*)\\}`).exec(schema!.contents)?.[1];
      expect(body, table.name).toBeDefined();
      for (const column of table.columns) expect(body).toMatch(new RegExp(`^  (${column.name} |\\w+ .*@map\\("${column.name}"\\))`, 'm'));
      for (const index of table.indexes) expect(body).toContain(`map: "${index.name}"`);
      expect(body).toContain('@@id([');
    }
    expect(schema!.contents).toMatch(/record \w+ @relation\(fields: \[scope, key\], references: \[scope, key\], onDelete: Cascade/);
    expect(project.notes.join('\n')).toContain('run `prisma migrate dev`');
    expect(project.files.find((file) => file.path === 'src/idempotency/README.md')!.contents).toContain('npx prisma migrate dev');

    // Idempotent: once the models are in the schema, a second run leaves schema.prisma alone.
    await writeFile(path.join(root, 'prisma/schema.prisma'), schema!.contents);
    const again = await scaffoldProject({ root, model: await model(), dir: 'src/idempotency', packageManager: 'npm' });
    expect(again.files.some((file) => file.path === 'prisma/schema.prisma')).toBe(false);
    if (!prismaMissing) await prismaValidate(root, provider);
  });
});

describe('Prisma with a multi-file schema (prisma/schema/*.prisma, as mfts/papermark keeps it)', () => {
  it('puts the models in a file of their own in that folder and the migration in prisma/migrations beside it', async () => {
    const schema = schemaOf('postgresql').replace(/\nmodel User[\s\S]*$/, '\n');
    const root = await repo({
      'package.json': '{"name":"docs","dependencies":{"@prisma/client":"6.19.0"}}',
      'prisma/schema/schema.prisma': schema,
      'prisma/schema/user.prisma': 'model User {\n  id    Int    @id @default(autoincrement())\n  email String @unique\n}\n',
      'prisma/migrations/20240301120000_init/migration.sql': '',
      'lib/app.ts': '',
    });
    const model = await modelFor('express-stripe-payments');
    const project = await scaffoldProject({ root, model, dir: 'lib/idempotency', packageManager: 'npm' });
    const paths = project.files.map((file) => file.path);
    expect(paths).toContain('prisma/migrations/20240301120001_idempotency/migration.sql');
    expect(paths).toContain('prisma/schema/idempotency.prisma');
    // The file with the datasource stays as it was.
    expect(paths).not.toContain('prisma/schema/schema.prisma');
    const models = project.files.find((file) => file.path === 'prisma/schema/idempotency.prisma')!.contents;
    expect(models).not.toContain('datasource');
    expect(models).toContain('@@map("idempotency_store")');
    expect(project.notes.join('\n')).toContain('The store\'s tables are in prisma/schema/idempotency.prisma');
    await writeFile(path.join(root, 'prisma/schema/idempotency.prisma'), models);
    if (!prismaMissing) await prismaValidate(root, 'postgresql', 'prisma/schema');
  });
});
