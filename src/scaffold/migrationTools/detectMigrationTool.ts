import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export type MigrationTool =
  | {
      kind: 'prisma';
      folder: string;
      existing: string[];
      schema?: { path: string; text: string };
      /** The project applies its schema with `prisma db push` and keeps no migrations folder: the models are the migration. */
      push?: true;
      /**
       * A multi-file schema (prisma/schema/*.prisma): the store's models go into this new file of that folder rather
       * than into the file holding the datasource.
       */
      modelsFile?: string;
    }
  | {
      kind: 'drizzle';
      /** drizzle.config's `out`: SQL migrations plus meta/_journal.json. */
      folder: string;
      existing: string[];
      dialect: string;
      /** Where the store's schema module goes: the configured schema folder, or beside the configured schema file. */
      schemaFile: string;
      /** The configured schema when it is one file (the user re-exports the store from it or lists both). */
      schemaEntry?: string;
      journal?: string;
      /** drizzle-kit's snapshots, `<out>/meta/NNNN_snapshot.json` by file name: the next one extends the latest. */
      snapshots?: Record<string, string>;
      /** drizzle-orm before 0.36: a table's extra config is an object keyed by constraint name, not an array. */
      objectConfig?: true;
    }
  | { kind: 'knex'; folder: string; existing: string[]; extension: 'ts' | 'js' }
  | { kind: 'typeorm'; folder: string; existing: string[] }
  | { kind: 'sql'; folder: string; existing: string[] }
  | { kind: 'none' };

/**
 * How the package at `packageDir` (relative to root) keeps its migrations: Prisma (prisma/migrations), Knex
 * (knexfile + migrations folder), TypeORM (a migrations folder of classes), or a plain folder of .sql files.
 * Folders are relative to root. Read from the manifest and the tree, never by running the tool.
 */
export async function detectMigrationTool(root: string, packageDir: string): Promise<MigrationTool> {
  const base = path.join(root, packageDir);
  const at = (...parts: string[]) => [packageDir, ...parts].filter(Boolean).join('/');
  const list = (relative: string) => readdir(path.join(base, relative)).then((names) => names.sort(), () => undefined);
  const manifest = await readFile(path.join(base, 'package.json'), 'utf8').then((text) => JSON.parse(text) as Record<string, Record<string, string> | undefined>, () => ({}) as Record<string, Record<string, string> | undefined>);
  const deps = new Set(['dependencies', 'devDependencies'].flatMap((key) => Object.keys(manifest[key] ?? {})));

  // package.json "prisma": { "schema": "src/prisma/schema.prisma" } moves the folder migrations live in.
  // Or the scripts name it (`prisma db push --schema ./libraries/db/prisma/schema.prisma`), or the package holds one.
  const scripts = Object.values((manifest['scripts'] as Record<string, string> | undefined) ?? {}).filter((script) => typeof script === 'string' && /\bprisma\b/.test(script));
  const scripted = scripts.map((script) => /--schema[= ]+["']?([^\s"']+\.prisma)/.exec(script)?.[1]).find((schema) => schema !== undefined);
  const configured = (manifest['prisma'] as { schema?: unknown } | undefined)?.schema ?? scripted;
  const prismaUsed = deps.has('prisma') || deps.has('@prisma/client');
  const found = typeof configured === 'string' || !prismaUsed || (await list('prisma'))?.includes('schema.prisma') ? undefined : await onlySchemaIn(base);
  const schemaSetting = typeof configured === 'string' ? configured.replace(/\\/g, '/').replace(/^\.\//, '') : found;
  const prismaDir = schemaSetting !== undefined ? path.posix.dirname(schemaSetting) : 'prisma';
  const prisma = await list(prismaDir);
  if (prisma?.includes('schema.prisma') || prisma?.includes('schema') || prismaUsed) {
    const schemaFile = schemaSetting?.endsWith('.prisma') ? schemaSetting : `${prismaDir}/schema.prisma`;
    const text = await readFile(path.join(base, schemaFile), 'utf8').catch(() => undefined);
    const schema = text === undefined ? {} : { schema: { path: at(schemaFile), text } };
    // A schema folder (prisma/schema/) keeps its migrations beside the folder (prisma/migrations) in the projects we met.
    const outer = path.posix.basename(prismaDir) === 'schema' && (await list(`${prismaDir}/migrations`)) === undefined ? path.posix.dirname(prismaDir) : undefined;
    const migrationsDir = outer !== undefined && (await list(`${outer}/migrations`)) !== undefined ? outer : prismaDir;
    const existing = await list(`${migrationsDir}/migrations`);
    // postiz applies its schema with `prisma db push` and has no migrations folder: a migration.sql would never run.
    const push = text !== undefined && existing === undefined && scripts.some((script) => /\bdb\s+push\b/.test(script)) ? { push: true as const } : {};
    const folderSchema = text !== undefined && (prisma ?? []).filter((name) => name.endsWith('.prisma')).length > 1;
    const modelsFile = folderSchema ? { modelsFile: at(prismaDir, 'idempotency.prisma') } : {};
    return { kind: 'prisma', folder: at(migrationsDir, 'migrations'), existing: existing ?? [], ...schema, ...push, ...modelsFile };
  }
  const drizzleConfig = (await list('.'))?.find((name) => /^drizzle\.config\.(ts|js|mjs|cjs|mts|cts|json)$/.test(name));
  if (drizzleConfig) {
    const text = await readFile(path.join(base, drizzleConfig), 'utf8');
    const setting = (key: string) => new RegExp(`["']?${key}["']?\\s*:\\s*\\[?\\s*["'\`]([^"'\`]+)["'\`]`).exec(text)?.[1]?.replace(/^\.\//, '');
    const out = (setting('out') ?? 'drizzle').replace(/\/+$/, '');
    const schema = setting('schema') ?? 'src/db/schema.ts';
    const single = /\.[cm]?[jt]s$/.test(schema) && !schema.includes('*');
    const schemaDir = single ? path.posix.dirname(schema) : schema.replace(/\/?\*.*$/, '');
    const extension = language(drizzleConfig, schema);
    const journal = await readFile(path.join(base, out, 'meta/_journal.json'), 'utf8').catch(() => undefined);
    const snapshotNames = ((await list(`${out}/meta`)) ?? []).filter((name) => /^\d+_snapshot\.json$/.test(name));
    const snapshots = Object.fromEntries(await Promise.all(snapshotNames.map(async (name) => [name, await readFile(path.join(base, out, 'meta', name), 'utf8')] as const)));
    // The installed drizzle-orm, else the manifest's range (`^0.34.0`).
    const installed = await readFile(path.join(base, 'node_modules/drizzle-orm/package.json'), 'utf8').then((text) => (JSON.parse(text) as { version?: string }).version, () => undefined);
    const declared = (manifest['dependencies'] ?? {})['drizzle-orm'] ?? (manifest['devDependencies'] ?? {})['drizzle-orm'];
    const [major, minor] = (/(\d+)\.(\d+)/.exec(installed ?? declared ?? '') ?? []).slice(1).map(Number);
    const objectConfig = major === 0 && minor !== undefined && minor < 36 ? { objectConfig: true as const } : {};
    return {
      kind: 'drizzle',
      ...objectConfig,
      folder: at(out),
      existing: (await list(out)) ?? [],
      dialect: setting('dialect') ?? setting('driver') ?? 'postgresql',
      schemaFile: at(schemaDir === '.' ? '' : schemaDir, `idempotency.${extension}`),
      ...(single ? { schemaEntry: at(schema) } : {}),
      ...(journal === undefined ? {} : { journal }),
      ...(snapshotNames.length === 0 ? {} : { snapshots }),
    };
  }
  const knexfile = (await list('.'))?.find((name) => /^knexfile\.(ts|js|cjs|mjs)$/.test(name));
  // Knex used as a query builder while another runner applies a folder of SQL files (postgrator, golang-migrate,
  // dbmate): its migrations are that folder's, not Knex's.
  const sqlFolder = knexfile ? undefined : await sqlMigrations(list);
  if (sqlFolder && deps.has('knex')) return { kind: 'sql', folder: at(sqlFolder.folder), existing: sqlFolder.existing };
  if (knexfile || deps.has('knex')) {
    const text = knexfile ? await readFile(path.join(base, knexfile), 'utf8') : '';
    const directory = /directory\s*:\s*['"]([^'"]+)['"]/.exec(text)?.[1]?.replace(/^\.\//, '') ?? 'migrations';
    return { kind: 'knex', folder: at(directory), existing: (await list(directory)) ?? [], extension: knexfile?.endsWith('.ts') ? 'ts' : 'js' };
  }
  if (deps.has('typeorm')) {
    for (const folder of ['src/migrations', 'src/migration', 'migrations', 'src/database/migrations']) {
      const existing = await list(folder);
      if (existing) return { kind: 'typeorm', folder: at(folder), existing };
    }
    return { kind: 'typeorm', folder: at((await list('src')) ? 'src/migrations' : 'migrations'), existing: [] };
  }
  const sql = sqlFolder ?? (await sqlMigrations(list));
  return sql ? { kind: 'sql', folder: at(sql.folder), existing: sql.existing } : { kind: 'none' };
}

/** The first conventional folder holding .sql migrations, with its file names. */
/** The one schema.prisma under `base` (not in node_modules, build output or dot folders, six levels at most), relative. */
async function onlySchemaIn(base: string): Promise<string | undefined> {
  const found: string[] = [];
  const visit = async (relative: string, depth: number): Promise<void> => {
    if (depth > 6 || found.length > 1) return;
    const entries = await readdir(path.join(base, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isFile() && entry.name === 'schema.prisma') found.push(relative === '' ? entry.name : `${relative}/${entry.name}`);
      else if (entry.isDirectory() && !/^(node_modules|dist|build|out|coverage)$|^\./.test(entry.name)) await visit(relative === '' ? entry.name : `${relative}/${entry.name}`, depth + 1);
    }
  };
  await visit('', 0);
  return found.length === 1 ? found[0] : undefined;
}

async function sqlMigrations(list: (relative: string) => Promise<string[] | undefined>): Promise<{ folder: string; existing: string[] } | undefined> {
  for (const folder of ['migrations', 'db/migrations', 'database/migrations', 'sql/migrations', 'sql', 'db/migrate']) {
    const existing = await list(folder);
    if (existing?.some((name) => name.endsWith('.sql'))) return { folder, existing };
  }
  return undefined;
}

/** The schema module's extension: the configured schema file's, else the config's language. */
function language(config: string, schema: string): 'ts' | 'js' {
  if (/\.[cm]?js$/.test(schema)) return 'js';
  if (/\.[cm]?ts$/.test(schema)) return 'ts';
  return /\.[cm]?js$/.test(config) ? 'js' : 'ts';
}
