import path from 'node:path';
import type { PathAlias } from '../scaffold/profile/pathAliases.js';
import type { ImportStyle } from './types.js';

export interface ProjectImports {
  aliases: readonly PathAlias[];
  /** '.js' where the project's files run as Node ES modules (the extension is needed), '' otherwise. */
  defaultExtension: '.js' | '';
  /** The workspace package (its folder, '' for the root) a project file belongs to; unset, the first two folders stand in. */
  packageOf?: (file: string) => string;
}

const SPECIFIER = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)(['"])([^'"\n]+)\1/g;

/**
 * The import spelling a reviewer expects in this file: the alias the file already uses for the scaffold's folder,
 * otherwise a path relative to the file, with `.js` only when the file's own relative imports carry it (or, with
 * none to copy, when the project resolves like Node's ESM). The quote character follows the file's imports.
 */
export function importStyleFor(file: string, text: string, scaffoldDir: string, project: ProjectImports): ImportStyle {
  const specifiers = [...text.matchAll(SPECIFIER)].map((m) => ({ quote: m[1] === '"' ? ('double' as const) : ('single' as const), value: m[2] ?? '' }));
  const quote = specifiers[0]?.quote ?? 'single';
  const relative = specifiers.filter((s) => s.value.startsWith('./') || s.value.startsWith('../'));
  const extension = relative.length === 0 ? project.defaultExtension : relative.some((s) => /\.[cm]?js$/.test(s.value)) ? '.js' : '';
  const covering = project.aliases.filter((a) => a.dir === '' || scaffoldDir === a.dir || scaffoldDir.startsWith(`${a.dir}/`));
  // A file in another part of a workspace (a shared library reaching the app's scaffold) that imports through the
  // workspace's aliases gets the scaffold's alias too, rather than a path climbing out of its own package.
  const elsewhere = inAnotherPackage(file, scaffoldDir, project) && specifiers.some((s) => project.aliases.some((a) => s.value.startsWith(a.prefix)));
  const alias = covering.find((a) => specifiers.some((s) => s.value.startsWith(a.prefix))) ?? (elsewhere ? covering.find((a) => a.dir !== '') : undefined);
  const importLines = text.split('\n').filter((line) => /^import\s.*['"]\s*;?\s*$/.test(line));
  const semicolons = importLines.length === 0 || importLines.some((line) => line.trimEnd().endsWith(';'));
  return {
    quote,
    semicolons,
    specifier: (target) => {
      if (alias) return `${alias.prefix}${path.posix.relative(alias.dir, `${scaffoldDir}/${target}`)}${extension}`;
      let spec = path.posix.relative(path.posix.dirname(file), `${scaffoldDir}/${target}`);
      if (!spec.startsWith('.')) spec = `./${spec}`;
      return `${spec}${extension}`;
    },
  };
}

function inAnotherPackage(file: string, scaffoldDir: string, project: ProjectImports): boolean {
  if (project.packageOf) return project.packageOf(file) !== project.packageOf(`${scaffoldDir}/index.ts`);
  // `apps/backend` of `apps/backend/src/x.ts`: without package markers to read, where in a workspace a file is.
  const topFolders = (rel: string) => rel.split('/').slice(0, 2).join('/');
  return topFolders(file) !== topFolders(scaffoldDir);
}
