import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readConfigJson } from '../profile/readTsconfig.js';
import { findPackageRoot } from './findPackageRoot.js';

export interface PlacementInput {
  root: string;
  /** Source locations of the protected handlers ("apps/api/src/payments.ts:42"), in action order; undefined when unknown. */
  sources: ReadonlyArray<string | undefined>;
  exists?: (file: string) => boolean;
}

export interface Placement {
  /** The package folder, relative to root ('' = the root package). */
  packageDir: string;
  /** Where the scaffold goes, relative to root: the package's source folder + /idempotency. */
  dir: string;
  /** Indexes into `sources` of the actions this scaffold protects. */
  actions: number[];
}

/**
 * Where scaffolding goes: into the package that holds the protected handlers, following its layout (`src/` when it
 * has one, `lib/` beside a Next.js `app/` or `pages/`, the `app/` source folder of other projects, else the package
 * folder). One placement per package when
 * actions live in several; actions without a known source go with the first. Pure apart from `exists`.
 */
export function planPlacement(input: PlacementInput): Placement[] {
  const exists = input.exists ?? existsSync;
  const byPackage = new Map<string, number[]>();
  const unplaced: number[] = [];
  input.sources.forEach((source, index) => {
    if (!source) return unplaced.push(index);
    const packageDir = findPackageRoot(input.root, source, exists);
    byPackage.set(packageDir, [...(byPackage.get(packageDir) ?? []), index]);
  });
  if (byPackage.size === 0) byPackage.set('', []);
  const placements = [...byPackage].map(([packageDir, actions]) => ({ packageDir, dir: scaffoldDirIn(input.root, packageDir, exists), actions }));
  placements[0]!.actions.push(...unplaced);
  placements[0]!.actions.sort((a, b) => a - b);
  return placements;
}

/**
 * `<package>/<folder>/idempotency` where the package's tsconfig compiles one folder (its `rootDir`, or an `include`
 * of one folder: `["./server/**\/*.ts"]`), so the scaffold is compiled with the code and the build's output layout
 * stays as it was; else `<package>/src/idempotency`; `<package>/lib/idempotency` for a Next.js app without src/ (its
 * app/ holds routes only); `<package>/app/idempotency` where app/ is an ordinary source folder (Express tutorials,
 * Adonis-style layouts); else `<package>/idempotency`.
 */
export function scaffoldDirIn(root: string, packageDir: string, exists: (file: string) => boolean = existsSync): string {
  const at = (name: string) => exists(path.join(root, packageDir, name));
  const compiled = compiledFolder(root, packageDir);
  const folder = compiled !== undefined && at(compiled) ? compiled : at('src') ? 'src' : (at('app') || at('pages')) && isNextApp(root, packageDir, at) ? 'lib' : at('app') ? 'app' : '';
  return [packageDir, folder, 'idempotency'].filter(Boolean).join('/');
}

/**
 * The one folder the package's tsconfig.json compiles: `compilerOptions.rootDir`, else the folder every `include`
 * entry starts with (declaration files aside). A scaffold outside it is either left out of the build or, imported from
 * the code, widens the common root so `outDir/server.js` becomes `outDir/server/server.js` and `npm start` breaks.
 */
function compiledFolder(root: string, packageDir: string): string | undefined {
  const json = readConfigJson(root, path.join(root, packageDir, 'tsconfig.json'));
  // The folders before the first wildcard or file name: './server/**/*.ts' → server.
  const folderOf = (entry: string): string[] => {
    const parts = path.posix.normalize(entry.replace(/\\/g, '/')).split('/').filter((part) => part !== '.' && part !== '');
    const end = parts.findIndex((part) => /[*?{[]/.test(part) || /\.[cm]?[jt]sx?$/.test(part));
    return parts.slice(0, end === -1 ? parts.length : end);
  };
  const options = json?.['compilerOptions'];
  const rootDir = options && typeof options === 'object' ? (options as Record<string, unknown>)['rootDir'] : undefined;
  const include = json?.['include'];
  const entries = typeof rootDir === 'string' ? [rootDir] : Array.isArray(include) ? include.filter((entry): entry is string => typeof entry === 'string' && !entry.endsWith('.d.ts')) : [];
  const folders = entries.map(folderOf);
  if (folders.length === 0 || folders.some((parts) => parts.includes('..'))) return undefined;
  const common: string[] = [];
  for (const [index, part] of (folders[0] ?? []).entries()) {
    if (!folders.every((parts) => parts[index] === part)) break;
    common.push(part);
  }
  return common.length > 0 ? common.join('/') : undefined;
}

const NEXT_FILES = ['next.config.js', 'next.config.mjs', 'next.config.ts', 'next.config.cjs', 'next-env.d.ts'];

/** Next.js by its config or type stub (both optional), else by `next` among the package's dependencies. */
function isNextApp(root: string, packageDir: string, at: (name: string) => boolean): boolean {
  if (NEXT_FILES.some(at)) return true;
  try {
    const pkg = JSON.parse(readFileSync(path.join(root, packageDir, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    return ['dependencies', 'devDependencies'].some((key) => typeof pkg[key]?.['next'] === 'string');
  } catch {
    return false;
  }
}
