import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { needsBareBuiltins } from './bareBuiltins.js';
import { JEST_CONFIG_FILES, jestCollects, readJestCollection } from './jestCollects.js';
import { needsSandboxEncoding, needsSandboxGlobals } from './jestSandbox.js';
import { parseJsonc } from './parseJsonc.js';
import { aliasedSpecifier } from './pathAliases.js';
import { profileFromOptions } from './profileFromOptions.js';
import { findWorkspaces } from '../../inspect/stack/findWorkspaces.js';
import { readManifest } from '../../inspect/stack/readManifest.js';
import { readConfigJson, readTsconfig } from './readTsconfig.js';
import { REFERENCE_PROFILE, TEST_RUNNERS, type ProjectProfile, type TestRunner } from './types.js';

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
 * Reads the project's tsconfig (resolving `extends`, packages included) and package.json into a ProjectProfile.
 * Plain JSON reading, no TypeScript: generate reads a profile per package and must not pay TypeScript's start-up.
 */
export async function readProjectProfile(input: ProfileInput): Promise<ProjectProfile> {
  const root = path.resolve(input.root);
  const start = path.resolve(root, input.dir);
  const manifest = await nearest(root, start, 'package.json');
  const pkg = manifest ? parseJson(manifest.text) : {};
  const packageType = pkg['type'] === 'module' ? 'module' : 'commonjs';
  const testRunner = chooseRunner(input.testFramework, pkg);
  const folder = manifest ? path.dirname(manifest.file) : root;
  const jestVersion = packageVersion(folder, pkg, 'jest');
  const jestTraits = {
    ...(needsBareBuiltins(jestVersion) ? { bareBuiltins: true } : {}),
    ...(testRunner === 'jest' && needsSandboxGlobals(jestVersion) ? { jestSandbox: true } : {}),
    ...(testRunner === 'jest' && jestVersion !== undefined && jestVersion < 2505 ? { jestGlobals: true } : {}),
    ...(testRunner === 'jest' && needsSandboxEncoding(jestVersion) ? { jestEncoding: true } : {}),
    ...(testRunner === 'jest' && input.language === 'javascript' && jestVersion !== undefined && jestVersion < 2400 ? { jestBabel6: true } : {}),
    ...(testRunner === 'jest' ? jestSuiteNaming(folder, pkg, start, input.language) : {}),
    ...(testRunner === 'jest' && input.language === 'typescript' ? await jestTransform(root, folder, pkg, jestVersion) : {}),
  };
  Object.assign(jestTraits, await httpPlatform(folder, pkg));
  if (testRunner === 'node-test' && tapTests(pkg)) Object.assign(jestTraits, { tapHarness: true });
  // Commands in the scaffold README run where the package's own config and dependencies are.
  if (folder !== root) Object.assign(jestTraits, { packageDir: path.relative(root, folder).split(path.sep).join('/') });
  const tsconfigFile = await nearest(root, start, 'tsconfig.json');
  const aliasesOf = (paths: Record<string, string[]>) => projectPaths(root, paths);
  if (input.language === 'javascript') {
    const esm = packageType === 'module';
    // A jsconfig.json carries the aliases of a JavaScript project (Next.js writes one).
    const jsconfig = await nearest(root, start, 'jsconfig.json');
    const paths = jsconfig ? aliasesOf(readTsconfig(root, jsconfig.file).paths) : {};
    return { ...REFERENCE_PROFILE, language: 'javascript', moduleSystem: esm ? 'esm' : 'commonjs', relativeImports: 'js-extension', testRunner, esLibrary: 2022, paths, ...jestTraits };
  }
  if (!tsconfigFile) return { ...REFERENCE_PROFILE, testRunner, ...jestTraits };
  const file = solutionMember(root, tsconfigFile.file);
  let read = readTsconfig(root, file);
  // `extends: "@acme/tsconfig/base.json"` before install: the workspace's own package of that name is what pnpm/npm link.
  if (read.unresolved.some((name) => !name.startsWith('.') && !path.isAbsolute(name))) {
    const packages = await findWorkspaces(root, await readManifest(root));
    if (packages.length > 0) read = readTsconfig(root, file, new Map(packages.map((p) => [p.name, path.join(root, p.dir)])));
  }
  const { options, paths, unresolved } = read;
  const version = packageVersion(folder, pkg, 'typescript');
  const compiled = profileFromOptions(options, packageType, unresolved);
  const rootPaths = aliasesOf(paths);
  const aliased = aliasedSpecifier(rootPaths, path.relative(root, start).split(path.sep).join('/'));
  return {
    ...compiled,
    testRunner,
    paths: rootPaths,
    ...(aliased === undefined ? {} : { scaffoldImport: compiled.relativeImports === 'js-extension' ? `${aliased}/index.js` : aliased }),
    tsconfig: path.relative(root, file).split(path.sep).join('/'),
    ...(unresolved.length > 0 ? { unreadExtends: unresolved } : {}),
    ...(version !== undefined && version < 409 ? { typescriptVersion: version } : {}),
    ...jestTraits,
  };
}

/** `paths` targets relative to the project root (posix), dropping any that point outside it. */
function projectPaths(root: string, paths: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, targets] of Object.entries(paths)) {
    const inside = targets.map((target) => path.relative(root, target).split(path.sep).join('/')).filter((target) => !target.startsWith('..') && !path.isAbsolute(target));
    if (inside.length > 0) out[key] = inside.map((target) => (target === '' ? '.' : target));
  }
  return out;
}

/**
 * A solution-style tsconfig (`"files": []` plus `references`, as Nx and Vite write them) compiles nothing itself:
 * the application's own config (tsconfig.app.json, not the spec/test/e2e one) says how the code is built.
 */
function solutionMember(root: string, file: string): string {
  const raw = readConfigJson(root, file) as { files?: unknown; include?: unknown; references?: Array<{ path?: unknown }> } | undefined;
  const empty = Array.isArray(raw?.files) && raw.files.length === 0 && (!Array.isArray(raw.include) || raw.include.length === 0);
  if (!empty || !Array.isArray(raw?.references)) return file;
  const members = raw.references
    .map((reference) => (typeof reference.path === 'string' ? path.resolve(path.dirname(file), reference.path) : undefined))
    .filter((member): member is string => member !== undefined)
    .map((member) => (member.endsWith('.json') ? member : path.join(member, 'tsconfig.json')));
  return members.find((member) => !/(spec|test|e2e|node)[^/\\]*\.json$/i.test(path.basename(member)) && readConfigJson(root, member) !== undefined) ?? file;
}

/** A package's installed version (major * 100 + minor), else the one package.json asks for (`^26.6.3` → 2606). */
export function packageVersion(folder: string, pkg: Record<string, unknown>, name: string): number | undefined {
  const installed = readJsonFile(path.join(folder, 'node_modules', name, 'package.json'))?.['version'];
  const declared = ['devDependencies', 'dependencies'].map((key) => (pkg[key] as Record<string, unknown> | undefined)?.[name]).find((value) => typeof value === 'string');
  const match = /(\d+)\.(\d+)/.exec(typeof installed === 'string' ? installed : typeof declared === 'string' ? declared : '');
  return match ? Number(match[1]) * 100 + Number(match[2]) : undefined;
}

function readJsonFile(file: string): Record<string, unknown> | undefined {
  try {
    return parseJson(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * 'spec' when the project's Jest config (testMatch/testRegex/roots, in package.json or a jest.config.*) collects
 * `idempotency.spec.ts` in the scaffold folder but not `idempotency.test.ts`, as every `nest new` project's does;
 * 'none' when it collects neither (the README then says what to add; the suite stays where its imports work).
 */
function jestSuiteNaming(folder: string, pkg: Record<string, unknown>, scaffold: string, language: ProjectProfile['language']): Pick<ProjectProfile, 'testFileSuffix' | 'jestIgnoresSuites'> {
  const collection = readJestCollection(folder, pkg);
  const extension = language === 'typescript' ? 'ts' : 'js';
  const collects = (suffix: string) => jestCollects(collection, folder, path.join(scaffold, `idempotency.${suffix}.${extension}`));
  if (collects('test')) return {};
  if (collects('spec')) return { testFileSuffix: 'spec' };
  return { jestIgnoresSuites: true };
}

/** Packages that make Jest run TypeScript (a transform, or Babel's TypeScript preset for the default babel-jest). */
const JEST_TYPESCRIPT = ['ts-jest', '@swc/jest', 'esbuild-jest', 'jest-esbuild', '@sucrase/jest-plugin', '@babel/preset-typescript'];

/**
 * `ts-jest@<Jest's major>` when nothing lets the project's Jest read TypeScript: none of JEST_TYPESCRIPT in the package
 * or the repository root, and no transform or preset in its Jest config (one we cannot read is trusted).
 */
async function jestTransform(root: string, folder: string, pkg: Record<string, unknown>, jestVersion: number | undefined): Promise<Pick<ProjectProfile, 'jestTransform'>> {
  const top = folder === root ? pkg : parseJson((await readFile(path.join(root, 'package.json'), 'utf8').catch(() => '{}')));
  const deps = new Set([pkg, top].flatMap((manifest) => ['dependencies', 'devDependencies'].flatMap((key) => Object.keys((manifest[key] as Record<string, string> | undefined) ?? {}))));
  if (JEST_TYPESCRIPT.some((name) => deps.has(name))) return {};
  const configs = await Promise.all([...JEST_CONFIG_FILES, 'babel.config.js', 'babel.config.json', '.babelrc'].map((name) => readFile(path.join(folder, name), 'utf8').catch(() => '')));
  if (/\b(transform|preset|presets)\b/.test([...configs, JSON.stringify(pkg['jest'] ?? {}), JSON.stringify(pkg['babel'] ?? {})].join('\n'))) return {};
  const major = jestVersion === undefined ? undefined : Math.floor(jestVersion / 100);
  // ts-jest's majors follow Jest's up to 29; its 29 line also runs Jest 30.
  return { jestTransform: major === undefined || major >= 30 ? 'ts-jest' : major < 29 ? `ts-jest@${major}` : 'ts-jest@29' };
}

/**
 * NestJS on @nestjs/platform-fastify: the generated suite boots that platform. A project that declares both platforms
 * (`nest new` adds the Express one) is on Fastify when its entry file creates the app on FastifyAdapter.
 */
async function httpPlatform(folder: string, pkg: Record<string, unknown>): Promise<Pick<ProjectProfile, 'httpPlatform'>> {
  const deps = new Set(['dependencies', 'devDependencies'].flatMap((key) => Object.keys((pkg[key] as Record<string, string> | undefined) ?? {})));
  if (!deps.has('@nestjs/platform-fastify')) return {};
  if (!deps.has('@nestjs/platform-express')) return { httpPlatform: 'fastify' };
  const entry = await readFile(path.join(folder, 'src', 'main.ts'), 'utf8').catch(() => '');
  return /\bnew\s+FastifyAdapter\b/.test(entry) ? { httpPlatform: 'fastify' } : {};
}

function chooseRunner(configured: string | undefined, pkg: Record<string, unknown>): TestRunner {
  if ((TEST_RUNNERS as readonly string[]).includes(configured ?? '')) return configured as TestRunner;
  const deps = new Set(['dependencies', 'devDependencies'].flatMap((key) => Object.keys((pkg[key] as Record<string, string> | undefined) ?? {})));
  const scripts = Object.values((pkg['scripts'] as Record<string, string> | undefined) ?? {}).join('\n');
  if (deps.has('vitest')) return 'vitest';
  if (deps.has('jest') || /\bjest\b/.test(scripts)) return 'jest';
  if (deps.has('mocha') || /\bmocha\b/.test(scripts)) return 'mocha';
  if (/\bnode\b[^&|;]*\s--test\b/.test(scripts)) return 'node-test';
  // node-tap runs any file that prints TAP, as node:test does when tap runs it.
  if (tapTests(pkg)) return 'node-test';
  return REFERENCE_PROFILE.testRunner;
}

/** The package's `test` script runs node-tap (`tap`, `tap --node-arg=…`), which it declares. */
function tapTests(pkg: Record<string, unknown>): boolean {
  const deps = new Set(['dependencies', 'devDependencies'].flatMap((key) => Object.keys((pkg[key] as Record<string, string> | undefined) ?? {})));
  const test = (pkg['scripts'] as Record<string, string> | undefined)?.['test'] ?? '';
  return (deps.has('tap') || deps.has('@tapjs/core')) && /(^|[\s;&|])tap(\s|$)/.test(test);
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
  return parseJsonc(text) ?? {};
}
