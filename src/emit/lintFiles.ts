import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface LintResult {
  output?: string;
  errorCount: number;
}
interface ProjectESLint {
  lintText(code: string, options: { filePath: string }): Promise<LintResult[]>;
  isPathIgnored(filePath: string): Promise<boolean>;
}
type ESLintClass = new (options: { cwd: string; fix: boolean }) => ProjectESLint;
interface ESLintModule {
  ESLint?: ESLintClass;
  /** ESLint 8.57+: the class for flat or eslintrc configs. */
  loadESLint?: (options: { useFlatConfig: boolean; cwd?: string }) => Promise<ESLintClass>;
}
type ConfigKind = 'flat' | 'legacy';

const FLAT_CONFIG = /^eslint\.config\.[cm]?[jt]s$/;
const LEGACY_CONFIG = /^\.eslintrc(?:\.(?:js|cjs|yaml|yml|json))?$/;

/** What ESLint config a folder holds: a flat `eslint.config.*`, an `.eslintrc*` or package.json `eslintConfig`. */
async function configsIn(dir: string): Promise<{ flat: boolean; legacy: boolean; manifest: boolean }> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const manifest = names.includes('package.json');
  let legacy = names.some((name) => LEGACY_CONFIG.test(name));
  if (!legacy && manifest) {
    const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => '');
    try {
      const parsed = JSON.parse(text) as { eslintConfig?: unknown } | null;
      legacy = typeof parsed?.eslintConfig === 'object' && parsed.eslintConfig !== null;
    } catch {
      // Not a manifest ESLint could read either.
    }
  }
  return { flat: names.some((name) => FLAT_CONFIG.test(name)), legacy, manifest };
}

/**
 * Where the folders that can configure ESLint for a file end: the repository root (the nearest folder at or above
 * `root` holding .git), else `root` itself, so a config lying around above an unversioned project is not taken.
 */
async function repositoryTop(root: string): Promise<string> {
  for (let dir = root; ; dir = path.dirname(dir)) {
    if (await stat(path.join(dir, '.git')).then(() => true, () => false)) return dir;
    if (path.dirname(dir) === dir) return root;
  }
}

interface ConfigPlace {
  kind: ConfigKind;
  /** The folder of the config: ESLint runs from there, as `eslint` run in that package would. */
  dir: string;
  /** The nearest folder with a package.json, where the package's own ESLint would be installed. */
  packageDir: string;
}

/**
 * The config ESLint would use for a file, from the file's folder up to the repository root: the nearest flat config
 * (ESLint 9 uses it whenever there is one, and 8.57 too), else the nearest eslintrc or `eslintConfig` (which then
 * cascades upwards by ESLint's own rules). None when no folder on the way has one.
 */
async function configFor(file: string, top: string, seen: Map<string, Promise<Awaited<ReturnType<typeof configsIn>>>>): Promise<ConfigPlace | undefined> {
  let flat: string | undefined;
  let legacy: string | undefined;
  let packageDir: string | undefined;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    let found = seen.get(dir);
    if (!found) seen.set(dir, (found = configsIn(dir)));
    const here = await found;
    if (here.manifest) packageDir ??= dir;
    if (here.flat) flat ??= dir;
    if (here.legacy) legacy ??= dir;
    if (flat !== undefined || dir === top || path.dirname(dir) === dir || !isInside(dir, top)) break;
  }
  const useLegacy = legacy !== undefined && (flat === undefined || process.env['ESLINT_USE_FLAT_CONFIG'] === 'false');
  const dir = useLegacy ? legacy : flat;
  return dir === undefined ? undefined : { kind: useLegacy ? 'legacy' : 'flat', dir, packageDir: packageDir ?? dir };
}

function isInside(dir: string, top: string): boolean {
  const rel = path.relative(top, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Where `eslint` resolves from each folder in turn (the package's, the config's, the project root's), or none. */
function resolveESLint(dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    try {
      return createRequire(path.join(dir, 'package.json')).resolve('eslint');
    } catch {
      // Not installed there.
    }
  }
  return undefined;
}

/** The ESLint class of the install at `resolved` for a flat or an eslintrc config, or none. Never installed: only resolved. */
async function eslintClass(resolved: string, kind: ConfigKind): Promise<ESLintClass | undefined> {
  try {
    const loaded = (await import(pathToFileURL(resolved).href)) as ESLintModule & { default?: ESLintModule };
    const api: ESLintModule = loaded.ESLint || loaded.loadESLint ? loaded : (loaded.default ?? {});
    if (api.loadESLint) return await api.loadESLint({ useFlatConfig: kind === 'flat' });
    // Before 8.57: ESLint is the eslintrc class, the flat one is FlatESLint in use-at-your-own-risk (8.21+).
    if (kind === 'legacy') return api.ESLint;
    const risky = createRequire(resolved).resolve('eslint/use-at-your-own-risk');
    const flat = (await import(pathToFileURL(risky).href)) as { FlatESLint?: ESLintClass; default?: { FlatESLint?: ESLintClass } };
    return flat.FlatESLint ?? flat.default?.FlatESLint;
  } catch {
    return undefined;
  }
}

export interface LintInput {
  /** Project-relative path: the project's config and ignores are looked up for it. */
  path: string;
  text: string;
  /** Lint only when this earlier text of the file was lint-clean, so no unrelated fix lands in the diff. */
  cleanBefore?: string;
}

export interface LintOutcome {
  /** The text ESLint's fixes left, or undefined when they changed nothing (or did not run on the file). */
  fixed: Array<string | undefined>;
  /** How many files ESLint read to the end (not ignored by the project's config, no failure). */
  linted: number;
}

/**
 * The project's ESLint with --fix over files about to be written: semicolons, quotes, commas as its config wants
 * them. Each file gets the config ESLint itself would find for it (in a monorepo, the package's own config when it has
 * one) and the ESLint installed for that package, else the root's; one ESLint instance per config for the whole
 * batch. A file its config ignores, a file no config covers, and any failure (a rule that needs type information, a
 * crash) leaves the text as it was.
 */
export async function lintWithProjectESLint(root: string, inputs: readonly LintInput[]): Promise<LintOutcome> {
  const fixed: Array<string | undefined> = inputs.map(() => undefined);
  if (inputs.length === 0) return { fixed, linted: 0 };
  const base = path.resolve(root);
  const top = await repositoryTop(base);
  const seen = new Map<string, Promise<Awaited<ReturnType<typeof configsIn>>>>();
  const fixers = new Map<string, Promise<ProjectESLint | undefined>>();
  const fixerFor = (place: ConfigPlace): Promise<ProjectESLint | undefined> => {
    const resolved = resolveESLint([place.packageDir, place.dir, base]);
    if (resolved === undefined) return Promise.resolve(undefined);
    const key = `${place.kind}\0${place.dir}\0${resolved}`;
    let fixer = fixers.get(key);
    if (!fixer) {
      fixer = eslintClass(resolved, place.kind).then((ESLint) => {
        try {
          return ESLint ? new ESLint({ cwd: place.dir, fix: true }) : undefined;
        } catch {
          return undefined;
        }
      });
      fixers.set(key, fixer);
    }
    return fixer;
  };
  let linted = 0;
  for (const [index, input] of inputs.entries()) {
    const filePath = path.join(base, input.path);
    try {
      const place = await configFor(filePath, top, seen);
      const fixer = place && (await fixerFor(place));
      if (!fixer || (await fixer.isPathIgnored(filePath))) continue;
      const clean = input.cleanBefore === undefined || ((await fixer.lintText(input.cleanBefore, { filePath }))[0]?.errorCount ?? 1) === 0;
      if (!clean) continue;
      const output = (await fixer.lintText(input.text, { filePath }))[0]?.output;
      linted += 1;
      if (output !== undefined && output !== input.text) fixed[index] = output;
    } catch {
      // Left as it was.
    }
  }
  return { fixed, linted };
}

/** What ESLint reads: JavaScript and TypeScript sources (never the document, Markdown, JSON, YAML or SQL). */
const LINTED = /\.[cm]?[jt]sx?$/;

/**
 * The scaffold's code files as the project's ESLint --fix leaves them, after prettier (so a config that enforces
 * prettier agrees, and rules such as `semi: never` have the last word), and how many it changed. An addition to a
 * user's own file (editOf) is never linted. A changed file loses its `source`: the manifest then never takes the
 * linted text on disk for prettier's output, so a later run with another ESLint config starts from prettier's.
 */
export async function lintScaffoldFiles<T extends { path: string; contents: string; editOf?: string; source?: string }>(root: string, files: readonly T[]): Promise<{ files: T[]; adjusted: number; linted: number }> {
  const linted = files.filter((file) => file.editOf === undefined && LINTED.test(file.path));
  const { fixed, linted: count } = await lintWithProjectESLint(root, linted.map((file) => ({ path: file.path, text: file.contents })));
  const byPath = new Map(linted.map((file, index) => [file.path, fixed[index]]));
  let adjusted = 0;
  const out = files.map((file) => {
    const contents = byPath.get(file.path);
    if (contents === undefined) return file;
    adjusted += 1;
    const { source: _source, ...rest } = file;
    return { ...rest, contents } as T;
  });
  return { files: out, adjusted, linted: count };
}
