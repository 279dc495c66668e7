import { existsSync } from 'node:fs';
import path from 'node:path';
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
 * has one, `lib/` beside a Next.js `app/` or `pages/`, else the package folder). One placement per package when
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

/** `<package>/src/idempotency`, `<package>/lib/idempotency` for a Next.js app without src/, else `<package>/idempotency`. */
export function scaffoldDirIn(root: string, packageDir: string, exists: (file: string) => boolean = existsSync): string {
  const at = (name: string) => exists(path.join(root, packageDir, name));
  const folder = at('src') ? 'src' : at('app') || at('pages') ? 'lib' : '';
  return [packageDir, folder, 'idempotency'].filter(Boolean).join('/');
}
