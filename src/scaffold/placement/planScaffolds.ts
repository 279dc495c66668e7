import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DesignModel } from '../../model/types.js';
import type { ScaffoldFile } from '../types.js';
import { detectPackageManager, installCommands, missingDependencies, type PackageManager } from './installCommands.js';
import { findPackageRoot } from './findPackageRoot.js';
import { planPlacement } from './planPlacement.js';
import { packageVersion } from '../profile/readProjectProfile.js';
import { readConfigJson, readTsconfig } from '../profile/readTsconfig.js';
import { pinForTypeScript, typingsBeyondTypeScript, vitestSpecifier } from './testedVersions.js';

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
  return placements.map((placement) => {
    const actions = placement.actions.map((index) => model.actions[index]!);
    const javascript = model.stack.language === 'typescript' && plainJavaScriptPackage(root, placement.packageDir, actions);
    const headless = model.stack.framework !== 'none' && headlessPackage(root, placement.packageDir, actions);
    const stack = { ...model.stack, ...(javascript ? { language: 'javascript' as const } : {}), ...(headless ? { framework: 'none' as const } : {}) };
    return {
      packageDir: placement.packageDir,
      dir: placement === primary ? configuredDir : placement.dir,
      model: { ...model, actions, ...(javascript || headless ? { stack } : {}) },
    };
  });
}

/** The web frameworks a package serves with, as its package.json names them. */
const WEB_FRAMEWORKS = /^(express|fastify|@nestjs\/core|koa|@koa\/router|hono|next)$/;

/**
 * A package whose actions are all consumers and jobs and whose package.json names no web framework (Inventory_ERP's
 * packages/event-bus, a library the services share): its scaffold is the plain wrapper, not the HTTP adapter of the
 * services beside it, which would make a library depend on fastify.
 */
function headlessPackage(root: string, packageDir: string, actions: DesignModel['actions']): boolean {
  if (packageDir === '' || actions.length === 0 || actions.some((action) => action.trigger === 'http' || action.trigger === 'webhook')) return false;
  const manifest = readConfigJson(root, path.join(root, packageDir, 'package.json'));
  if (!manifest) return false;
  const declared = ['dependencies', 'devDependencies', 'peerDependencies'].flatMap((key) => Object.keys((manifest[key] as Record<string, unknown> | undefined) ?? {}));
  return !declared.some((name) => WEB_FRAMEWORKS.test(name));
}

/**
 * A package of plain JavaScript in a TypeScript repository (orders-bullmq's fake-payment-service, run as `node
 * server.js`): every handler is a .js file, and the package has no tsconfig.json and no TypeScript runner of its own.
 * Its scaffold is JavaScript, which it can load; a .ts one would need a compiler it does not have.
 */
function plainJavaScriptPackage(root: string, packageDir: string, actions: DesignModel['actions']): boolean {
  if (packageDir === '') return false;
  const files = actions.map((action) => action.source?.replace(/:\d+(?::\d+)?$/, ''));
  if (files.length === 0 || !files.every((file) => file !== undefined && /\.[cm]?js$/.test(file))) return false;
  if (readConfigJson(root, path.join(root, packageDir, 'tsconfig.json')) !== undefined) return false;
  const manifest = readConfigJson(root, path.join(root, packageDir, 'package.json')) ?? {};
  const declared = ['dependencies', 'devDependencies'].flatMap((key) => Object.keys((manifest[key] as Record<string, unknown> | undefined) ?? {}));
  return !declared.some((name) => /^(typescript|ts-node|tsx|@swc\/core|esbuild-register)$/.test(name));
}

/**
 * "Add the dependencies …" for one scaffold, with the project's package manager, and what no package can fix (typings
 * the project's TypeScript cannot read); empty when there is nothing to say.
 */
export async function dependencyNotes(root: string, scaffold: Pick<PlannedScaffold, 'packageDir' | 'dir'>, files: readonly ScaffoldFile[], manager: PackageManager, typescript: boolean, extraDev: readonly string[] = []): Promise<string[]> {
  const own = await readManifest(path.join(root, scaffold.packageDir));
  const top = scaffold.packageDir === '' ? own : await readManifest(root);
  // The root's dependencies reach a workspace package (hoisted, linked); a package merely beside the root app, with no
  // workspace declaring it, is installed on its own (its own lockfile, its own Docker image) and must declare them.
  const workspace = scaffold.packageDir === '' || (await declaresWorkspaces(root, top));
  const declared = new Set((workspace ? [own, top] : [own]).flatMap((manifest) => ['dependencies', 'devDependencies', 'peerDependencies'].flatMap((key) => Object.keys((manifest[key] as Record<string, unknown> | undefined) ?? {}))));
  const missing = missingDependencies(files, declared, typescript);
  const typescriptVersion = typescript ? (packageVersion(path.join(root, scaffold.packageDir), own, 'typescript') ?? packageVersion(root, top, 'typescript')) : undefined;
  const nodeTypes = typescript ? nodeTypesToAdd([own, top], files, typescriptVersion) : undefined;
  if (nodeTypes) missing.dev = [...missing.dev, nodeTypes].sort();
  if (extraDev.length > 0) missing.dev = [...new Set([...missing.dev, ...extraDev])].sort();
  missing.runtime = pinForTypeScript(missing.runtime, typescriptVersion);
  missing.dev = pinForTypeScript(missing.dev, typescriptVersion);
  if (missing.dev.includes('vitest')) {
    const vitest = await vitestSpecifier(root, scaffold.packageDir, [own, top]);
    missing.dev = missing.dev.map((entry) => (entry === 'vitest' ? vitest : entry));
  }
  const name = typeof own['name'] === 'string' ? own['name'] : undefined;
  const workspaceRoot = scaffold.packageDir === '' ? await workspaceRootKind(root, top, manager) : undefined;
  // A package no root manifest declares as a workspace has its own lockfile and package manager.
  const standalone = scaffold.packageDir !== '' && !(await declaresWorkspaces(root, top));
  const packageManager = standalone ? await detectPackageManager(path.join(root, scaffold.packageDir)) : manager;
  const target = { packageDir: scaffold.packageDir, ...(name ? { name } : {}), ...(workspaceRoot ? { workspaceRoot } : {}), ...(standalone ? { standalone } : {}) };
  const commands = installCommands(packageManager, target, missing);
  // Said whether or not the package is declared already: the project's compiler cannot read its typings either way.
  const imported = missingDependencies(files, new Set(), typescript);
  const caveats = typingsBeyondTypeScript([...imported.runtime, ...imported.dev], typescriptVersion);
  // The scaffold's syntax (`import type`, `?.`, `??`) needs TypeScript 3.8; 3.9, the last 3.x, is the smallest step.
  if (typescriptVersion !== undefined && typescriptVersion < 308) {
    const upgrade = installCommands(packageManager, target, { runtime: [], dev: ['typescript@3.9'] });
    caveats.unshift(`This project compiles with TypeScript ${Math.floor(typescriptVersion / 100)}.${typescriptVersion % 100}, which cannot parse the scaffolding in ${scaffold.dir} (it uses \`import type\`, \`?.\` and \`??\`, TypeScript 3.8 and later). Upgrade TypeScript before compiling it: ${upgrade.join(' && ')}`);
  }
  if (typescript && imported.dev.includes('vitest') && legacyResolutionWithoutSkipLibCheck(root, scaffold.packageDir)) {
    caveats.push(`The generated suites in ${scaffold.dir} import vitest, whose typings (and vite's, which they import) use package "exports" that this project's tsconfig cannot resolve: it reads modules the Node 10 way ("moduleResolution": "node" or its default) and checks library typings, so \`tsc\` over ${scaffold.dir} reports errors in node_modules/vitest. Set "skipLibCheck": true in its compilerOptions (what \`tsc --init\` writes), or "moduleResolution": "node16" / "bundler", or keep the suites out of the compiled files (add "${path.posix.relative(scaffold.packageDir, scaffold.dir)}/**/*.test.ts" and "${path.posix.relative(scaffold.packageDir, scaffold.dir)}/store-contract.ts" to its "exclude")`);
  }
  const install = commands.length === 0 ? undefined : `The scaffolding in ${scaffold.dir} needs packages that ${scaffold.packageDir === '' ? 'the project' : `package ${name ?? scaffold.packageDir}`} does not declare yet (nothing was installed): ${commands.join(' && ')}`;
  return [...(install ? [install] : []), ...caveats];
}

/** Whether the repository root declares workspaces (npm, Yarn, Bun `workspaces`; pnpm-workspace.yaml). */
async function declaresWorkspaces(root: string, manifest: Record<string, unknown>): Promise<boolean> {
  if (manifest['workspaces'] !== undefined) return true;
  return access(path.join(root, 'pnpm-workspace.yaml')).then(() => true, () => false);
}

/** Whether the root is a pnpm or Yarn 1 workspace root, whose package manager wants an explicit flag to add there. */
async function workspaceRootKind(root: string, manifest: Record<string, unknown>, manager: PackageManager): Promise<'pnpm' | 'yarn-classic' | undefined> {
  const exists = (file: string) => access(path.join(root, file)).then(() => true, () => false);
  if (manager === 'pnpm') return (await exists('pnpm-workspace.yaml')) ? 'pnpm' : undefined;
  // Yarn 2+ (a .yarnrc.yml) treats the root as one more workspace and has no -W flag.
  if (manager === 'yarn') return manifest['workspaces'] !== undefined && !(await exists('.yarnrc.yml')) ? 'yarn-classic' : undefined;
  return undefined;
}

/**
 * The oldest @types/node the scaffold compiles against: it reads the web globals and Node 18 additions by shape
 * (oldTypings.test.ts compiles it under @types/node 16.11 and 18.15), so what it needs is the `node:` module names
 * (@types/node 16); with bare builtin specifiers (a Jest before 27 project) 14 is enough.
 */
const NODE_TYPES_MAJOR = { prefixed: 16, bare: 14 } as const;

/**
 * The scaffold imports built-ins, so TypeScript needs @types/node, and one that declares what it imports: an old
 * major (a Turborepo starter pins 15) has no `node:` module names. The version suggested is one the project's
 * TypeScript can read: today's @types/node uses syntax TypeScript 4.x cannot parse, 16.11 is the newest line the
 * old-typings suite compiles under TypeScript 4.2. With bare builtin specifiers (a Jest before 27 project) it is
 * 14.18: that Jest's own typings name NodeJS.Global, which @types/node 16 removed.
 */
function nodeTypesToAdd(manifests: ReadonlyArray<Record<string, unknown>>, files: readonly ScaffoldFile[], typescriptVersion: number | undefined): string | undefined {
  const declared = (name: string) =>
    manifests
      .flatMap((manifest) => ['dependencies', 'devDependencies'].map((key) => (manifest[key] as Record<string, unknown> | undefined)?.[name]))
      .find((value): value is string => typeof value === 'string');
  const prefixed = files.some((file) => /(?:from |require\(|import\()\s*['"]node:/.test(file.contents));
  // node:test (the suites for a node:test or tap project) is declared from @types/node 18, which reads with TypeScript 4.1.
  const nodeTest = files.some((file) => /(?:from |require\()\s*['"]node:test['"]/.test(file.contents));
  const old = typescriptVersion !== undefined && typescriptVersion < 500;
  const suggestion = nodeTest ? (old ? '@types/node@18.11' : '@types/node@20') : old ? (prefixed ? '@types/node@16.11' : '@types/node@14.18') : '@types/node@20';
  const range = declared('@types/node');
  if (range === undefined) return old ? suggestion : '@types/node';
  const major = /(\d+)/.exec(range)?.[1];
  const least = nodeTest ? 18 : NODE_TYPES_MAJOR[prefixed ? 'prefixed' : 'bare'];
  return major !== undefined && Number(major) < least ? suggestion : undefined;
}

async function readManifest(dir: string): Promise<Record<string, unknown>> {
  try {
    const value = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The package's tsconfig resolves modules as Node 10 did (no package "exports") and type-checks library typings: vitest
 * 3 and 4 typings import subpaths only "exports" maps (`vite/module-runner`, `#types/…`), so such a compiler fails on them.
 */
function legacyResolutionWithoutSkipLibCheck(root: string, packageDir: string): boolean {
  const file = path.join(root, packageDir, 'tsconfig.json');
  if (readConfigJson(root, file) === undefined) return false;
  const { options } = readTsconfig(root, file);
  if (options['skipLibCheck'] === true) return false;
  const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : undefined);
  const module = lower(options['module']);
  const resolution = lower(options['moduleResolution']) ?? (module === undefined || /^(commonjs|amd|umd|system|es\d*|es2015|es2020|es2022|esnext)$/.test(module) ? 'node10' : 'modern');
  return resolution === 'node' || resolution === 'node10' || resolution === 'classic';
}
