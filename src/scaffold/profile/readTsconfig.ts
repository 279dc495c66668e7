import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseJsonc } from './parseJsonc.js';

/** compilerOptions as written (strings stay strings), merged down the `extends` chain; baseUrl made absolute. */
export type RawCompilerOptions = Record<string, unknown>;

export interface TsconfigRead {
  options: RawCompilerOptions;
  /** compilerOptions.paths with each target made absolute (against baseUrl, else the config that declared them). */
  paths: Record<string, string[]>;
  /** `extends` entries that could not be read (a package not installed, or only outside the project): their options are missing. */
  unresolved: string[];
}

/**
 * Package bases as they stand (the options the profile reads), for a project whose dependencies are not installed
 * yet: without them an `extends: "@tsconfig/node20"` would silently read as TypeScript's defaults (CommonJS, ES5).
 */
const KNOWN_BASES: Record<string, RawCompilerOptions> = {
  // fastify-tsconfig 3 (fastify/demo extends it).
  'fastify-tsconfig': { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true, esModuleInterop: true },
  '@tsconfig/node-lts': { module: 'NodeNext', moduleResolution: 'Node16', target: 'ES2024', strict: true, esModuleInterop: true },
  '@tsconfig/recommended': { module: 'commonjs', target: 'ES2016', strict: true, esModuleInterop: true },
};
for (const [major, target] of [['16', 'ES2021'], ['18', 'ES2022'], ['20', 'ES2022'], ['22', 'ES2022'], ['24', 'ES2024']] as const) {
  KNOWN_BASES[`@tsconfig/node${major}`] = { module: 'Node16', moduleResolution: 'Node16', target, strict: true, esModuleInterop: true };
}

/** The raw JSON of one config file (no `extends`), or undefined when it is missing, unreadable or outside root. */
export function readConfigJson(root: string, file: string): Record<string, unknown> | undefined {
  const real = insideRoot(root, file);
  if (!real) return undefined;
  try {
    return parseJsonc(readFileSync(real, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Reads a tsconfig as TypeScript would for the options the profile needs: relative and package `extends` (a string
 * or, since TypeScript 5.0, an array whose later entries win), packages found in node_modules from the config's
 * folder up to the project root, else (dependencies not installed yet) the project's own workspace package of that
 * name in `workspacePackages` (name → absolute folder), as the package manager will link it. Nothing outside the
 * root is read, a symlink leading out of it included.
 */
export function readTsconfig(root: string, file: string, workspacePackages?: ReadonlyMap<string, string>): TsconfigRead {
  const realRoot = safeRealpath(root) ?? root;
  const state: LoadState = { pathsBase: undefined, unresolved: [], workspacePackages };
  const options = load(realRoot, file, new Set(), state);
  const baseUrl = typeof options['baseUrl'] === 'string' ? options['baseUrl'] : undefined;
  const base = baseUrl ?? state.pathsBase ?? path.dirname(file);
  const paths: Record<string, string[]> = {};
  const raw = options['paths'];
  if (raw && typeof raw === 'object') {
    for (const [key, targets] of Object.entries(raw as Record<string, unknown>)) {
      if (Array.isArray(targets)) paths[key] = targets.filter((t): t is string => typeof t === 'string').map((t) => path.resolve(base, t));
    }
  }
  return { options, paths, unresolved: state.unresolved };
}

interface LoadState {
  pathsBase: string | undefined;
  unresolved: string[];
  workspacePackages: ReadonlyMap<string, string> | undefined;
}

function load(root: string, file: string, seen: Set<string>, state: LoadState): RawCompilerOptions {
  if (seen.has(file)) return {};
  seen.add(file);
  const json = readConfigJson(root, file);
  if (!json) return {};
  const dir = path.dirname(file);
  let merged: RawCompilerOptions = {};
  for (const name of ([] as unknown[]).concat(json['extends'] ?? []).filter((n): n is string => typeof n === 'string')) {
    const next = resolveExtends(root, dir, name, state.workspacePackages);
    const known = KNOWN_BASES[name.replace(/\/tsconfig(\.json)?$/, '')];
    if (!next && !known) state.unresolved.push(name);
    merged = { ...merged, ...(next ? load(root, next, seen, state) : (known ?? {})) };
  }
  const own = json['compilerOptions'];
  if (own && typeof own === 'object' && !Array.isArray(own)) {
    const options = { ...(own as RawCompilerOptions) };
    if (typeof options['baseUrl'] === 'string') options['baseUrl'] = path.resolve(dir, options['baseUrl']);
    if (options['paths'] !== undefined) state.pathsBase = dir;
    merged = { ...merged, ...options };
  }
  return merged;
}

/** The file an `extends` entry names, or undefined when it is not there (or only outside the project). */
function resolveExtends(root: string, dir: string, name: string, workspacePackages?: ReadonlyMap<string, string>): string | undefined {
  if (name.startsWith('.') || path.isAbsolute(name)) {
    const file = path.resolve(dir, name);
    return [file, `${file}.json`].find((candidate) => isFile(candidate) && insideRoot(root, candidate));
  }
  const [, pkg, rest] = /^((?:@[^/]+\/)?[^/]+)(?:\/(.*))?$/.exec(name) ?? [];
  if (!pkg) return undefined;
  const inPackage = (home: string) => {
    const manifest = readConfigJson(root, path.join(home, 'package.json'));
    const entry = rest ?? (typeof manifest?.['tsconfig'] === 'string' ? manifest['tsconfig'] : 'tsconfig.json');
    const file = path.join(home, entry);
    return [file, `${file}.json`].find((candidate) => isFile(candidate) && insideRoot(root, candidate));
  };
  for (let folder = safeRealpath(dir) ?? dir; folder.startsWith(root); folder = path.dirname(folder)) {
    const home = path.join(folder, 'node_modules', pkg);
    const found = existsSync(home) ? inPackage(home) : undefined;
    if (found) return found;
    if (folder === root || path.dirname(folder) === folder) break;
  }
  const workspace = workspacePackages?.get(pkg);
  return workspace === undefined ? undefined : inPackage(workspace);
}

/** The real path of `file` when it (after symlinks) is inside the real root, else undefined. */
function insideRoot(root: string, file: string): string | undefined {
  const real = safeRealpath(file);
  const realRoot = safeRealpath(root) ?? root;
  if (!real) return undefined;
  return real === realRoot || real.startsWith(`${realRoot}${path.sep}`) ? real : undefined;
}

function safeRealpath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
