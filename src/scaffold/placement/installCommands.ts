import { access, readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import type { ScaffoldFile } from '../types.js';

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun' | 'unknown';

export interface Dependencies {
  runtime: string[];
  dev: string[];
}

/**
 * The npm packages the generated files import (bare specifiers, not node: built-ins), minus those the package
 * already declares. Imported only by the tests = a dev dependency; TypeScript also needs the @types of packages that
 * ship none (pg) and of the mocha globals.
 */
export function missingDependencies(files: readonly ScaffoldFile[], declared: ReadonlySet<string>, typescript: boolean): Dependencies {
  const runtime = new Set<string>();
  const dev = new Set<string>();
  const typesOnly = new Set<string>();
  for (const file of files) {
    if (!/\.(ts|js|mjs|cjs)$/.test(file.path)) continue;
    for (const name of importedPackages(file.contents)) (file.role === 'tests' ? dev : runtime).add(name);
    for (const name of importedPackages(file.contents, true)) typesOnly.add(name);
    if (file.role === 'tests' && /reference types="mocha"/.test(file.contents)) dev.add('mocha').add('@types/mocha');
    // NestFactory.create without an adapter loads the Express platform with require() at run time: no import names it.
    if (/\bawait\s+NestFactory\.create\(\s*\w+\s*(?:,\s*\{[^}]*\})?\s*\)/.test(file.contents)) (file.role === 'tests' ? dev : runtime).add('@nestjs/platform-express');
  }
  if (dev.delete('@jest/globals')) dev.add('jest');
  // Packages without their own types: needed by TypeScript whenever the code imports them, even for types only.
  for (const name of UNTYPED) if (typescript && (runtime.has(name) || dev.has(name) || typesOnly.has(name))) dev.add(`@types/${name}`);
  // A package that ships its own types and is imported only for them is still needed to compile (a dev dependency).
  for (const name of typesOnly) if (typescript && !UNTYPED.includes(name)) dev.add(name);
  for (const name of runtime) dev.delete(name);
  const keep = (names: Set<string>) => [...names].filter((name) => !declared.has(name)).sort();
  return { runtime: keep(runtime), dev: keep(dev) };
}

/** Packages the scaffold imports that ship no types of their own (DefinitelyTyped has them as @types/<name>). */
const UNTYPED = ['pg', 'express', 'better-sqlite3', 'koa'];

/** Bare package names a file loads at run time (or, with `typeOnly`, imports only for types: `import type`). */
function importedPackages(code: string, typeOnly = false): string[] {
  const names: string[] = [];
  const pattern = typeOnly ? /^import\s+type\s[^;]*?from\s+['"]([^'"./][^'"]*)['"]/gm : /(?:^import\s+(?!type\s)[^;]*?from\s+|^export\s[^;]*?from\s+|require\(\s*|import\(\s*|^import\s+)['"]([^'"./][^'"]*)['"]/gm;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1]!;
    // `node:crypto`, and `crypto` where the profile asks for bare builtins (Jest before 27).
    if (isBuiltin(specifier)) continue;
    const parts = specifier.split('/');
    names.push(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
  }
  return names;
}

/**
 * The commands that add the dependencies to one package with the project's package manager, printed, never run:
 * `pnpm add -F api pg`, `npm i -w packages/api pg`, `yarn workspace api add pg`. `packageDir` '' = the root package.
 * A package that is no workspace member (a repository holding separate projects side by side, with no root
 * manifest declaring them) is addressed by its folder instead: `npm i --prefix processor pg`.
 */
export function installCommands(manager: PackageManager, target: { packageDir: string; name?: string; workspaceRoot?: 'pnpm' | 'yarn-classic'; standalone?: boolean }, dependencies: Dependencies): string[] {
  const workspace = target.packageDir !== '';
  const standalone = workspace && target.standalone === true;
  // The root of a pnpm workspace or a Yarn 1 workspace refuses a bare add ("Running this command will add the
  // dependency to the workspace root"): the flag says that is meant.
  const rootFlag = workspace ? '' : target.workspaceRoot === 'pnpm' && manager === 'pnpm' ? ' -w' : target.workspaceRoot === 'yarn-classic' && manager === 'yarn' ? ' -W' : '';
  // Names and folders come from the project's manifests: quoted unless plainly safe, so a printed command cannot
  // mean more than it says when pasted into a shell.
  const name = shellWord(target.name ?? target.packageDir);
  const dir = shellWord(target.packageDir);
  const command = (names: string[], dev: boolean): string => {
    const list = names.join(' ');
    switch (manager) {
      case 'pnpm':
        return `pnpm add${standalone ? ` --dir ${dir}` : workspace ? ` -F ${name}` : rootFlag}${dev ? ' -D' : ''} ${list}`;
      case 'yarn':
        return `yarn${standalone ? ` --cwd ${dir}` : workspace ? ` workspace ${name}` : ''} add${rootFlag}${dev ? ' -D' : ''} ${list}`;
      case 'bun':
        return `bun add${workspace ? ` --cwd ${dir}` : ''}${dev ? ' -d' : ''} ${list}`;
      default:
        return `npm i${standalone ? ` --prefix ${dir}` : workspace ? ` -w ${dir}` : ''}${dev ? ' -D' : ''} ${list}`;
    }
  };
  const out: string[] = [];
  if (dependencies.runtime.length > 0) out.push(command(dependencies.runtime, false));
  if (dependencies.dev.length > 0) out.push(command(dependencies.dev, true));
  return out;
}

const shellWord = (text: string) => (/^[\w@./:+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/** The project's package manager: package.json "packageManager", else its lockfile, else npm. */
export async function detectPackageManager(root: string): Promise<PackageManager> {
  const declared = await readFile(path.join(root, 'package.json'), 'utf8')
    .then((text) => (JSON.parse(text) as { packageManager?: unknown }).packageManager)
    .catch(() => undefined);
  const name = typeof declared === 'string' ? declared.split('@')[0] : undefined;
  if (name === 'npm' || name === 'pnpm' || name === 'yarn' || name === 'bun') return name;
  const has = (file: string) => access(path.join(root, file)).then(() => true, () => false);
  if (await has('pnpm-lock.yaml')) return 'pnpm';
  if (await has('yarn.lock')) return 'yarn';
  if ((await has('bun.lockb')) || (await has('bun.lock'))) return 'bun';
  return 'npm';
}
