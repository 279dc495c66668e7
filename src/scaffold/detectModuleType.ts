import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ModuleType } from './javascript/transpile.js';

/**
 * How Node will load .js files in the scaffold folder: the "type" of the nearest package.json between that folder
 * and the project root ('commonjs' without one, as Node does). A package.json that does not parse counts as one without "type".
 */
export async function detectModuleType(root: string, dir: string): Promise<ModuleType> {
  const top = path.resolve(root);
  for (let folder = path.resolve(top, dir); ; folder = path.dirname(folder)) {
    const text = await readFile(path.join(folder, 'package.json'), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      try {
        return (JSON.parse(text) as { type?: unknown }).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (folder === top || path.dirname(folder) === folder || !folder.startsWith(top)) return 'commonjs';
  }
}
