import { existsSync } from 'node:fs';
import path from 'node:path';

/** What marks a package or project folder: its own package.json (npm/pnpm/yarn/bun workspaces, Turborepo) or an Nx project.json. */
const MARKERS = ['package.json', 'project.json'];

/**
 * The package folder (relative to root, POSIX, '' for the root itself) that holds a source file: the nearest folder
 * above it with a package.json or an Nx project.json. `file` may carry a `:line` suffix.
 */
export function findPackageRoot(root: string, file: string, exists: (file: string) => boolean = existsSync): string {
  const relative = file.replace(/:\d+(:\d+)?$/, '').replace(/\\/g, '/').replace(/^\.\//, '');
  const parts = relative.split('/').slice(0, -1);
  for (let depth = parts.length; depth > 0; depth -= 1) {
    const dir = parts.slice(0, depth).join('/');
    if (dir.split('/').includes('node_modules') || dir.split('/').includes('..')) continue;
    if (MARKERS.some((marker) => exists(path.join(root, dir, marker)))) return dir;
  }
  return '';
}
