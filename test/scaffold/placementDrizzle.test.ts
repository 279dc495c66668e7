import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldProject } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from './generateInto.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-drizzle-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

const JOURNAL = { version: '7', dialect: 'postgresql', entries: [{ idx: 0, version: '7', when: 1735689600000, tag: '0000_init', breakpoints: true }] };

/** Type-checks files under root with drizzle-orm (this repository's pinned devDependency) and @types/node. */
function compile(root: string, files: string[]): string[] {
  const program = ts.createProgram(
    files.map((file) => path.join(root, file)),
    { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: ['node'] },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe.each([
  ['postgresql', 'postgres', 'pgTable'],
  ['mysql', 'mysql', 'mysqlTable'],
])('Drizzle (%s): a schema module and a journaled migration in drizzle-kit layout', (dialect, database, tableFn) => {
  it('writes <out>/0001_idempotency.sql with breakpoints, one journal entry, and a schema module that compiles against drizzle-orm', async () => {
    const root = await repo({
      'package.json': JSON.stringify({ name: 'api', type: 'module', dependencies: { 'drizzle-orm': '0.45.4' }, devDependencies: { 'drizzle-kit': '0.31.11' } }),
      'drizzle.config.ts': `import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  dialect: '${dialect}',\n  schema: './src/db/schema.ts',\n  out: './drizzle',\n});\n`,
      'drizzle/0000_init.sql': 'CREATE TABLE users (id integer primary key);\n',
      'drizzle/meta/_journal.json': JSON.stringify({ ...JOURNAL, dialect }, null, 2),
      'src/db/schema.ts': '',
      'src/app.ts': '',
    });
    const model = await modelFor('express-stripe-payments', (raw) => ((raw.stack as Record<string, unknown>).database = database));
    const project = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    const byPath = new Map(project.files.map((file) => [file.path, file.contents]));

    const sql = byPath.get('drizzle/0001_idempotency.sql')!;
    expect(sql).toContain('--> statement-breakpoint');
    // Every chunk drizzle's migrator runs holds exactly one statement.
    for (const chunk of sql.split('--> statement-breakpoint')) expect(chunk.replace(/--[^\n]*/g, '').replace(/'[^']*'/g, '').match(/;/g)?.length ?? 0).toBeLessThanOrEqual(1);

    const journal = JSON.parse(byPath.get('drizzle/meta/_journal.json')!) as typeof JOURNAL;
    expect(journal.entries).toEqual([JOURNAL.entries[0], { idx: 1, version: '7', when: 1767225600000, tag: '0001_idempotency', breakpoints: true }]);
    expect(journal.dialect).toBe(dialect);

    const schema = byPath.get('src/db/idempotency.ts')!;
    expect(schema).toContain(`${tableFn}('idempotency_store'`);
    expect(schema).toContain(`${tableFn}('idempotency_saga_steps'`);
    expect(project.notes.join('\n')).toContain('re-export it from src/db/schema.ts');

    // Compiles (strict, NodeNext) against the real drizzle-orm, and a query through it type-checks too.
    await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    await writeFile(path.join(root, 'src/db/idempotency.ts'), schema);
    await writeFile(path.join(root, 'src/db/use.ts'), "import { idempotencyStore } from './idempotency.js';\n\nexport type Row = typeof idempotencyStore.$inferSelect;\nexport const fencing: keyof Row = 'fencingToken';\n");
    expect(compile(root, ['src/db/idempotency.ts', 'src/db/use.ts'])).toEqual([]);

    // Once journaled, a second run keeps the tag and leaves the journal alone.
    await writeFile(path.join(root, 'drizzle/meta/_journal.json'), byPath.get('drizzle/meta/_journal.json')!);
    const again = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    expect(again.files.some((file) => file.path === 'drizzle/meta/_journal.json')).toBe(false);
    expect(again.files.some((file) => file.path === 'drizzle/0001_idempotency.sql')).toBe(true);
  });
});

describe('Drizzle before 0.36 (vercel/ai-chatbot pins drizzle-orm ^0.34)', () => {
  it('writes the extra config as an object keyed by constraint name, which drizzle-orm 0.34 takes (and later ones still do)', async () => {
    const root = await repo({
      'package.json': JSON.stringify({ name: 'chat', type: 'module', dependencies: { 'drizzle-orm': '^0.34.0' } }),
      'drizzle.config.ts': "import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  dialect: 'postgresql',\n  schema: './src/db/schema.ts',\n  out: './drizzle',\n});\n",
      'drizzle/0000_init.sql': 'CREATE TABLE users (id integer primary key);\n',
      'drizzle/meta/_journal.json': JSON.stringify(JOURNAL, null, 2),
      'src/db/schema.ts': '',
    });
    const model = await modelFor('express-stripe-payments');
    const project = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    const schema = project.files.find((file) => file.path === 'src/db/idempotency.ts')!.contents;
    // The printer's text, before the project's formatter runs at write time.
    expect(schema).toContain('}, table => ({');
    expect(schema).toContain("idempotencyStorePkey: primaryKey({ name: 'idempotency_store_pkey'");
    expect(schema).toContain("idempotencyStoreExpiresIdx: index('idempotency_store_expires_idx')");
    // This repository's drizzle-orm (0.45) still accepts the object form.
    await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    await writeFile(path.join(root, 'src/db/idempotency.ts'), schema);
    expect(compile(root, ['src/db/idempotency.ts'])).toEqual([]);
  });
});
