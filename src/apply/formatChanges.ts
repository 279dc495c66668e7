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
 * A project without prettier or without a config gets the transforms' output as is.
 */
export async function formatChanges(root: string, changes: readonly FileChange[]): Promise<FileChange[]> {
  const prettier = await projectPrettier(root);
  if (!prettier) return [...changes];
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
