import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as PrettierModule from 'prettier';
import type { FileChange } from './planApply.js';

type Prettier = typeof PrettierModule;

/** The project's own prettier (its version, its plugins), or none: apply never brings a formatter of its own. */
async function projectPrettier(root: string): Promise<Prettier | undefined> {
  try {
    const resolved = createRequire(path.join(root, 'package.json')).resolve('prettier');
    // prettier 2 is CommonJS (its API under `default`); prettier 3 is ESM. Both answer format/check/resolveConfig,
    // synchronously in 2, so every call is awaited.
    const loaded = (await import(pathToFileURL(resolved).href)) as Prettier & { default?: Prettier };
    return typeof loaded.resolveConfig === 'function' ? loaded : loaded.default;
  } catch {
    return undefined;
  }
}

/** prettier 2 answers synchronously and throws; prettier 3 returns promises that reject. Both end up here. */
async function attempt<T>(run: () => T | Promise<T>, fallback: T): Promise<T> {
  try {
    return await run();
  } catch {
    return fallback;
  }
}

/**
 * Formats the touched files with the project's prettier and its config, and only files that were prettier-clean
 * before the edit (new files always): otherwise formatting would bury the wiring under unrelated reformatting.
 * A project without prettier or without a config gets the transforms' output as is, except the files apply creates
 * (formatNewFiles).
 */
export async function formatChanges(root: string, changes: readonly FileChange[]): Promise<FileChange[]> {
  const prettier = await projectPrettier(root);
  if (!prettier) return formatNewFiles(root, changes);
  const out: FileChange[] = [];
  for (const change of changes) {
    const filepath = path.join(root, change.path);
    const config = await attempt(() => prettier.resolveConfig(filepath), null);
    if (config === null) {
      out.push(change);
      continue;
    }
    const options = { ...config, filepath };
    const clean = change.before === undefined || (await attempt(() => prettier.check(change.before!, options), false));
    out.push(clean ? { ...change, after: await attempt(() => prettier.format(change.after, options), change.after) } : change);
  }
  return out;
}

/**
 * Without the project's prettier (not installed yet), the files apply creates (the instance, webhookEvent.js, …) are
 * formatted as generate formats the scaffold beside them: the project's prettier config if it has one, else the
 * house style. A JavaScript file is transpiled from TypeScript, whose printer indents by four spaces; left so, it
 * would be the one file of the scaffold that does. Edits to the user's own files stay as the transforms made them.
 */
async function formatNewFiles(root: string, changes: readonly FileChange[]): Promise<FileChange[]> {
  const created = changes.filter((change) => change.before === undefined);
  if (created.length === 0) return [...changes];
  const { formatFiles } = await import('../emit/format.js');
  const formatted = await formatFiles(created.map((change) => ({ path: change.path, contents: change.after, class: 'scaffold' as const })), root);
  const byPath = new Map(formatted.map((file) => [file.path, file.contents]));
  return changes.map((change) => (change.before === undefined ? { ...change, after: byPath.get(change.path) ?? change.after } : change));
}
