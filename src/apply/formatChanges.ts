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
    return (await import(pathToFileURL(resolved).href)) as Prettier;
  } catch {
    return undefined;
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
    const config = await prettier.resolveConfig(filepath).catch(() => null);
    if (config === null) {
      out.push(change);
      continue;
    }
    const options = { ...config, filepath };
    const clean = change.before === undefined || (await prettier.check(change.before, options).catch(() => false));
    out.push(clean ? { ...change, after: await prettier.format(change.after, options).catch(() => change.after) } : change);
  }
  return out;
}
