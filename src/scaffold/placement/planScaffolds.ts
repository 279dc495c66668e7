import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DesignModel } from '../../model/types.js';
import type { ScaffoldFile } from '../types.js';
import { installCommands, missingDependencies, type PackageManager } from './installCommands.js';
import { findPackageRoot } from './findPackageRoot.js';
import { planPlacement } from './planPlacement.js';
import { vitestSpecifier } from './testedVersions.js';

export interface PlannedScaffold {
  /** The package folder ('' = root) and the scaffold folder, both relative to the project root. */
  packageDir: string;
  dir: string;
  /** The design restricted to this package's actions (the whole design when there is one scaffold). */
  model: DesignModel;
}

/**
 * One scaffold per package that holds protected handlers. The configured folder is kept for the package it lies in;
 * every other package (all of them, when it lies in none) gets one at the same place in its own layout.
 */
export function planScaffolds(root: string, model: DesignModel, configuredDir: string): PlannedScaffold[] {
  const placements = planPlacement({ root, sources: model.actions.map((action) => action.source) });
  // One scaffold: its package is the one holding the configured folder, which the user (or init's default) chose; the
  // actions' sources can be absent (a placeholder design, a hand-written config) and would say "the root package".
  if (placements.length <= 1) return [{ packageDir: findPackageRoot(root, `${configuredDir}/index.ts`), dir: configuredDir, model }];
  const inside = (packageDir: string) => packageDir === '' || configuredDir === packageDir || configuredDir.startsWith(`${packageDir}/`);
  // The longest package folder that contains the configured dir is its package. A folder in none of them (another
  // package, say) would put a package's middleware where its handlers cannot import it: each keeps its own layout.
  const primary = [...placements].sort((a, b) => b.packageDir.length - a.packageDir.length).find((placement) => inside(placement.packageDir));
  return placements.map((placement) => ({
    packageDir: placement.packageDir,
    dir: placement === primary ? configuredDir : placement.dir,
    model: { ...model, actions: placement.actions.map((index) => model.actions[index]!) },
  }));
}

/** "Add the dependencies …" for one scaffold, with the project's package manager; undefined when nothing is missing. */
export async function dependencyNote(root: string, scaffold: Pick<PlannedScaffold, 'packageDir' | 'dir'>, files: readonly ScaffoldFile[], manager: PackageManager, typescript: boolean): Promise<string | undefined> {
  const own = await readManifest(path.join(root, scaffold.packageDir));
  const top = scaffold.packageDir === '' ? own : await readManifest(root);
  const declared = new Set([own, top].flatMap((manifest) => ['dependencies', 'devDependencies', 'peerDependencies'].flatMap((key) => Object.keys((manifest[key] as Record<string, unknown> | undefined) ?? {}))));
  const missing = missingDependencies(files, declared, typescript);
  const nodeTypes = typescript ? nodeTypesToAdd([own, top]) : undefined;
  if (nodeTypes) missing.dev = [...missing.dev, nodeTypes].sort();
  if (missing.dev.includes('vitest')) {
    const vitest = await vitestSpecifier(root, scaffold.packageDir, [own, top]);
    missing.dev = missing.dev.map((entry) => (entry === 'vitest' ? vitest : entry));
  }
  const name = typeof own['name'] === 'string' ? own['name'] : undefined;
  const workspaceRoot = scaffold.packageDir === '' ? await workspaceRootKind(root, top, manager) : undefined;
  const commands = installCommands(manager, { packageDir: scaffold.packageDir, ...(name ? { name } : {}), ...(workspaceRoot ? { workspaceRoot } : {}) }, missing);
  if (commands.length === 0) return undefined;
  return `The scaffolding in ${scaffold.dir} needs packages that ${scaffold.packageDir === '' ? 'the project' : `package ${name ?? scaffold.packageDir}`} does not declare yet (nothing was installed): ${commands.join(' && ')}`;
}

/** Whether the root is a pnpm or Yarn 1 workspace root, whose package manager wants an explicit flag to add there. */
async function workspaceRootKind(root: string, manifest: Record<string, unknown>, manager: PackageManager): Promise<'pnpm' | 'yarn-classic' | undefined> {
  const exists = (file: string) => access(path.join(root, file)).then(() => true, () => false);
  if (manager === 'pnpm') return (await exists('pnpm-workspace.yaml')) ? 'pnpm' : undefined;
  // Yarn 2+ (a .yarnrc.yml) treats the root as one more workspace and has no -W flag.
  if (manager === 'yarn') return manifest['workspaces'] !== undefined && !(await exists('.yarnrc.yml')) ? 'yarn-classic' : undefined;
  return undefined;
}

/** The oldest @types/node whose globals the scaffold uses (fetch, performance, IncomingMessage.headersDistinct). */
const NODE_TYPES_MAJOR = 18;

/**
 * The scaffold imports node: built-ins, so TypeScript needs @types/node, and a current one: an old major (a
 * Turborepo starter pins 15) has no node: module names and none of the globals, and the scaffold fails to compile.
 */
function nodeTypesToAdd(manifests: ReadonlyArray<Record<string, unknown>>): string | undefined {
  const ranges = manifests.flatMap((manifest) => ['dependencies', 'devDependencies'].map((key) => (manifest[key] as Record<string, unknown> | undefined)?.['@types/node']));
  const range = ranges.find((value): value is string => typeof value === 'string');
  if (range === undefined) return '@types/node';
  const major = /(\d+)/.exec(range)?.[1];
  return major !== undefined && Number(major) < NODE_TYPES_MAJOR ? '@types/node@20' : undefined;
}

async function readManifest(dir: string): Promise<Record<string, unknown>> {
  try {
    const value = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
