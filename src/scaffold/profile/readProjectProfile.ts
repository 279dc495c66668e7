import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type * as TsMorph from 'ts-morph';
import { loadTypeScript } from '../javascript/transpile.js';
import { REFERENCE_PROFILE, TEST_RUNNERS, type ProjectProfile, type TestRunner } from './types.js';

type Ts = typeof TsMorph.ts;
type CompilerOptions = TsMorph.ts.CompilerOptions;

export interface ProfileInput {
  /** The project root (inspection root); nothing above it is read. */
  root: string;
  /** The scaffold folder, relative to root: the nearest tsconfig.json and package.json above it decide. */
  dir: string;
  language: 'typescript' | 'javascript';
  /** The config's stack.testFramework; 'unknown' (or a runner we cannot write for) falls back to package.json. */
  testFramework?: string;
}

/**
 * @tsconfig/node* bases as they stand, for a project whose dependencies are not installed yet: without them an
 * `extends: "@tsconfig/node20"` would silently read as TypeScript's defaults (CommonJS, ES5).
 */
const NODE_BASES: Record<string, CompilerOptions> = {};
for (const [major, target] of [['16', 'ES2021'], ['18', 'ES2022'], ['20', 'ES2022'], ['22', 'ES2022'], ['24', 'ES2024']] as const) {
  NODE_BASES[`@tsconfig/node${major}`] = { module: 'Node16', moduleResolution: 'Node16', target, strict: true, esModuleInterop: true } as unknown as CompilerOptions;
}

/** Reads the project's tsconfig (resolving `extends`, packages included) and package.json into a ProjectProfile. */
export async function readProjectProfile(input: ProfileInput): Promise<ProjectProfile> {
  const root = path.resolve(input.root);
  const start = path.resolve(root, input.dir);
  const manifest = await nearest(root, start, 'package.json');
  const pkg = manifest ? parseJson(manifest.text) : {};
  const packageType = pkg['type'] === 'module' ? 'module' : 'commonjs';
  const testRunner = chooseRunner(input.testFramework, pkg);
  const tsconfigFile = await nearest(root, start, 'tsconfig.json');
  if (input.language === 'javascript') {
    const esm = packageType === 'module';
    return { ...REFERENCE_PROFILE, language: 'javascript', moduleSystem: esm ? 'esm' : 'commonjs', relativeImports: 'js-extension', testRunner, esLibrary: 2022 };
  }
  if (!tsconfigFile) return { ...REFERENCE_PROFILE, testRunner };
  const ts = loadTypeScript();
  const file = solutionMember(ts, tsconfigFile.file);
  const options = compilerOptions(ts, file);
  const version = typescriptVersion(manifest ? path.dirname(manifest.file) : root, pkg);
  return {
    ...profileFromOptions(ts, options, packageType),
    testRunner,
    paths: options.paths ?? {},
    tsconfig: path.relative(root, file).split(path.sep).join('/'),
    ...(version !== undefined && version < 409 ? { typescriptVersion: version } : {}),
  };
}

/** The profile part that follows from compiler options alone (exported for tests of odd combinations). */
export function profileFromOptions(ts: Ts, options: CompilerOptions, packageType: 'module' | 'commonjs'): Omit<ProjectProfile, 'testRunner' | 'paths' | 'tsconfig'> {
  const { ModuleKind: M, ModuleResolutionKind: R, ScriptTarget: T } = ts;
  const target = options.target ?? T.ES5;
  const module = options.module ?? (target >= T.ES2015 ? M.ES2015 : M.CommonJS);
  const nodeModule = module === M.Node16 || module === M.NodeNext || (module as number) === 101; /* Node18 */
  const resolution =
    options.moduleResolution ?? (nodeModule ? R.NodeNext : module === M.Preserve ? R.Bundler : R.Node10);
  const moduleSystem: ProjectProfile['moduleSystem'] = nodeModule
    ? packageType === 'module'
      ? 'esm'
      : 'commonjs'
    : module === M.CommonJS || module === M.AMD || module === M.UMD
      ? 'commonjs'
      : 'esm';
  const nodeResolution = resolution === R.Node16 || resolution === R.NodeNext;
  // Node's ESM loader needs the extension; bundlers, ts-jest and require() do not, and some (jest) fail with it.
  const relativeImports = moduleSystem === 'esm' && (nodeResolution || (resolution !== R.Bundler && packageType === 'module')) ? 'js-extension' : 'extensionless';
  const interop = options.esModuleInterop ?? nodeModule;
  const synthetic = options.allowSyntheticDefaultImports ?? (interop || module === M.System || resolution === R.Bundler);
  return {
    language: 'typescript',
    moduleSystem,
    relativeImports,
    defaultImportInterop: moduleSystem === 'commonjs' ? interop : synthetic,
    esLibrary: libraryYear(ts, options, target),
  };
}

/**
 * A solution-style tsconfig (`"files": []` plus `references`, as Nx and Vite write them) compiles nothing itself:
 * the application's own config (tsconfig.app.json, not the spec/test/e2e one) says how the code is built.
 */
function solutionMember(ts: Ts, file: string): string {
  const raw = ts.readConfigFile(file, (name) => ts.sys.readFile(name)).config as { files?: unknown; include?: unknown; references?: Array<{ path?: unknown }> } | undefined;
  const empty = Array.isArray(raw?.files) && raw.files.length === 0 && (!Array.isArray(raw.include) || raw.include.length === 0);
  if (!empty || !Array.isArray(raw?.references)) return file;
  const members = raw.references
    .map((reference) => (typeof reference.path === 'string' ? path.resolve(path.dirname(file), reference.path) : undefined))
    .filter((member): member is string => member !== undefined)
    .map((member) => (member.endsWith('.json') ? member : path.join(member, 'tsconfig.json')));
  return members.find((member) => !/(spec|test|e2e|node)[^/\\]*\.json$/i.test(path.basename(member)) && ts.sys.fileExists(member)) ?? file;
}

function compilerOptions(ts: Ts, file: string): CompilerOptions {
  const read = ts.readConfigFile(file, (name) => ts.sys.readFile(name));
  if (read.error || !read.config) return {};
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(file), undefined, file);
  const unresolved = parsed.errors.some((error) => error.code === 6053 || error.code === 5083);
  const base = unresolved ? uninstalledBase(ts, file, new Set()) : {};
  return { ...base, ...parsed.options };
}

/** Options of an @tsconfig/node* base anywhere up the extends chain, converted like tsconfig text (enum values). */
function uninstalledBase(ts: Ts, file: string, seen: Set<string>): CompilerOptions {
  if (seen.has(file)) return {};
  seen.add(file);
  const config = ts.readConfigFile(file, (name) => ts.sys.readFile(name)).config as { extends?: unknown } | undefined;
  const names = ([] as unknown[]).concat(config?.extends ?? []).filter((name): name is string => typeof name === 'string');
  for (const name of names) {
    if (name.startsWith('.')) {
      const next = path.resolve(path.dirname(file), name);
      const found = uninstalledBase(ts, next.endsWith('.json') ? next : `${next}.json`, seen);
      if (Object.keys(found).length > 0) return found;
      continue;
    }
    const base = NODE_BASES[name.replace(/\/tsconfig(\.json)?$/, '')];
    if (base) return ts.convertCompilerOptionsFromJson(base, '').options;
  }
  return {};
}

function libraryYear(ts: Ts, options: CompilerOptions, target: number): number {
  const year = (text: string) => (/^(?:lib\.)?esnext/i.test(text) ? 2099 : Number(/^(?:lib\.)?es(\d{4})/i.exec(text)?.[1] ?? (/^(?:lib\.)?es6/i.test(text) ? 2015 : 0)));
  const fromTarget = target === ts.ScriptTarget.ESNext ? 2099 : target >= ts.ScriptTarget.ES2015 ? 2013 + target : 5;
  const libs = (options.lib ?? []).map(year).filter((value) => value > 0);
  return libs.length > 0 ? Math.max(...libs) : fromTarget;
}

/** The installed TypeScript's version (major * 100 + minor), else the one package.json asks for. */
function typescriptVersion(folder: string, pkg: Record<string, unknown>): number | undefined {
  const installed = readJsonFile(path.join(folder, 'node_modules/typescript/package.json'))?.['version'];
  const declared = ['devDependencies', 'dependencies'].map((key) => (pkg[key] as Record<string, unknown> | undefined)?.['typescript']).find((value) => typeof value === 'string');
  const match = /(\d+)\.(\d+)/.exec(typeof installed === 'string' ? installed : typeof declared === 'string' ? declared : '');
  return match ? Number(match[1]) * 100 + Number(match[2]) : undefined;
}

function readJsonFile(file: string): Record<string, unknown> | undefined {
  const text = loadTypeScript().sys.readFile(file);
  return text === undefined ? undefined : parseJson(text);
}

function chooseRunner(configured: string | undefined, pkg: Record<string, unknown>): TestRunner {
  if ((TEST_RUNNERS as readonly string[]).includes(configured ?? '')) return configured as TestRunner;
  const deps = new Set(['dependencies', 'devDependencies'].flatMap((key) => Object.keys((pkg[key] as Record<string, string> | undefined) ?? {})));
  const scripts = Object.values((pkg['scripts'] as Record<string, string> | undefined) ?? {}).join('\n');
  if (deps.has('vitest')) return 'vitest';
  if (deps.has('jest') || /\bjest\b/.test(scripts)) return 'jest';
  if (deps.has('mocha') || /\bmocha\b/.test(scripts)) return 'mocha';
  if (/\bnode\b[^&|;]*\s--test\b/.test(scripts)) return 'node-test';
  return REFERENCE_PROFILE.testRunner;
}

async function nearest(root: string, start: string, name: string): Promise<{ file: string; text: string } | undefined> {
  for (let folder = start; ; folder = path.dirname(folder)) {
    const file = path.join(folder, name);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined) return { file, text };
    if (folder === root || path.dirname(folder) === folder || !folder.startsWith(root)) return undefined;
  }
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
