import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { buildScaffoldView, type ScaffoldView } from '../../../src/scaffold/scaffoldView.js';
import { modelFor, ROOT } from '../generateInto.js';
import type { Loose } from '../harness.js';

export interface Materialized {
  /** Where the scaffold was written. */
  readonly dir: string;
  readonly view: ScaffoldView;
  /** The scaffold's migration text, when the store has one. */
  readonly migration?: string;
  /** Imports one generated module (TypeScript, transformed by vitest) by its file name without extension. */
  load(module: string): Promise<Record<string, Loose>>;
  remove(): Promise<void>;
}

/**
 * The generated scaffold of an Express design on the given database, written under .tmp (so its imports resolve
 * from this repository's node_modules): the contract runs against exactly the files users get. `releases` maps a
 * package the scaffold imports to an aliased devDependency holding an older release of it (`mysql2` →
 * `mysql2-2.3`): a node_modules folder of the scaffold's own links the name to it, so the same files load that one.
 */
export async function materializeStore(database: 'postgres' | 'mysql' | 'sqlite' | 'libsql' | 'redis' | 'dynamodb', releases: Record<string, string> = {}): Promise<Materialized> {
  const model = await modelFor('express-stripe-payments', (raw) => {
    (raw.stack as Record<string, unknown>).database = database;
  });
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `contract-${database}-`));
  const files = generateScaffold(model, { dir: '.' });
  if (files.length === 0) throw new Error(`no scaffold target for ${database}`);
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  for (const [name, alias] of Object.entries(releases)) {
    await mkdir(path.join(dir, 'node_modules'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', alias), path.join(dir, 'node_modules', name), 'dir');
  }
  return {
    dir,
    view: buildScaffoldView(model),
    migration: files.find((file) => file.role === 'ddl')?.contents,
    load: async (module) => (await import(pathToFileURL(path.join(dir, `${module}.ts`)).href)) as Record<string, Loose>,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
