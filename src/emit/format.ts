import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as PrettierModule from 'prettier';
import type { RenderedFile } from '../render/renderDocument.js';
import { pruneCache, readCache, writeCache } from './diskCache.js';
import { type ManifestEntry, normalizeText, readManifest, sha256Of } from './manifest.js';
import { readInside } from './safePath.js';

/** How generated code is formatted when the user's project has no prettier config. */
export const HOUSE_STYLE = { singleQuote: true, printWidth: 110 } as const;

/** prettier's options for a generated file: the user's config when the project has one, else the house style. */
export function formatOptions(filepath: string, userConfig: object | null = null) {
  return { ...(userConfig ?? HOUSE_STYLE), filepath, proseWrap: 'preserve', embeddedLanguageFormatting: 'off', endOfLine: 'lf' } as const;
}

export interface FormattedFile extends RenderedFile {
  /** Hash of the unformatted text, prettier's version and the options: what the manifest remembers (see below). */
  source?: string;
}

/**
 * prettier's output for the same input, version and options is the same, so when the manifest says a file was last
 * written from this very source and the disk still holds exactly what was written, the disk is the formatted text.
 * Formatting is most of a cold `generate`; this makes the common CI case (`--check` with nothing changed) skip it.
 */
async function previouslyFormatted(root: string, entry: ManifestEntry | undefined, source: string): Promise<string | undefined> {
  if (entry?.source !== source) return undefined;
  const onDisk = await readInside(root, entry.path).catch(() => undefined);
  return onDisk !== undefined && sha256Of(onDisk) === entry.sha256 ? normalizeText(onDisk) : undefined;
}

/** prettier's output by `source` (input, version and options), for a process that formats the same file twice (init, tests). */
const formattedInProcess = new Map<string, string>();

/** Forgets what this process formatted, as a fresh CLI run would (tests). */
export function clearFormatCache(): void {
  formattedInProcess.clear();
}

/** The project's cache of prettier's output (see diskCache.ts): keyed by `source`, which holds everything prettier reads. */
const FORMAT_BUCKET = 'format';

/** prettier's version, read from its package.json: knowing it must not cost loading prettier. */
let prettierVersion: string | undefined;
async function installedPrettierVersion(): Promise<string> {
  prettierVersion ??= (JSON.parse(await readFile(createRequire(import.meta.url).resolve('prettier/package.json'), 'utf8')) as { version: string }).version;
  return prettierVersion;
}

/**
 * The files prettier 3 looks for when resolving a config (its config-searcher), from the file's folder up to the
 * filesystem root. package.json and package.yaml count only with a `prettier` key.
 */
const PRETTIER_CONFIG_FILES = [
  '.prettierrc', '.prettierrc.json', '.prettierrc.yml', '.prettierrc.yaml', '.prettierrc.json5', '.prettierrc.js', 'prettier.config.js',
  '.prettierrc.ts', 'prettier.config.ts', '.prettierrc.mjs', 'prettier.config.mjs', '.prettierrc.mts', 'prettier.config.mts',
  '.prettierrc.cjs', 'prettier.config.cjs', '.prettierrc.cts', 'prettier.config.cts', '.prettierrc.toml', 'package.yaml',
];

/**
 * Whether prettier could find a config for files in `dir`: false only when none of its config files exists on the
 * way up (then the house style applies and prettier need not be loaded to ask). When unsure, true: prettier decides.
 */
async function mayHavePrettierConfig(dir: string, seen: Map<string, Promise<boolean>>): Promise<boolean> {
  let known = seen.get(dir);
  if (known === undefined) {
    known = (async () => {
      const present = await Promise.all(PRETTIER_CONFIG_FILES.map((name) => access(path.join(dir, name)).then(() => true, () => false)));
      if (present.some(Boolean)) return true;
      const manifest = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
      if (manifest !== undefined) {
        try {
          const parsed = JSON.parse(manifest) as unknown;
          if (parsed === null || typeof parsed !== 'object' || 'prettier' in parsed) return true;
        } catch {
          return true;
        }
      }
      const parent = path.dirname(dir);
      return parent === dir ? false : mayHavePrettierConfig(parent, seen);
    })();
    seen.set(dir, known);
  }
  return known;
}

export interface FormatFilesOptions {
  /**
   * Keep prettier's output in the project's cache (and drop entries this run did not use). Only a writing run does:
   * `--check` and `--dry-run` write nothing, the cache included.
   */
  writeCache?: boolean;
}

/**
 * Formats generated code the user keeps: TypeScript/JavaScript/YAML/JSON and the scaffold's README. The design
 * documents (HTML and Markdown) are emitted as rendered and never come here. prettier itself is loaded only when a
 * file is neither in the house style already, nor on disk as last formatted, nor in the project's format cache.
 */
export async function formatFiles(files: readonly RenderedFile[], cwd: string, options: FormatFilesOptions = {}): Promise<FormattedFile[]> {
  const wanted = files.filter((f) => /\.(md|ts|js|mjs|cjs|tsx|json|ya?ml)$/.test(f.path));
  if (wanted.length === 0) return [...files];
  const root = path.resolve(cwd);
  const [version, manifest] = await Promise.all([installedPrettierVersion(), readManifest(root)]);
  const tracked = new Map(manifest.files.map((entry) => [entry.path, entry]));
  let prettier: Promise<typeof PrettierModule> | undefined;
  const loadPrettier = () => (prettier ??= import('prettier'));
  const searched = new Map<string, Promise<boolean>>();
  const used = new Set<string>();
  const out: FormattedFile[] = [];
  for (const file of files) {
    if (!wanted.includes(file)) {
      out.push(file);
      continue;
    }
    // Documents use fixed options so they are byte-identical on every machine; code follows the user's config.
    const absolute = path.join(root, file.path);
    const userConfig =
      file.path.endsWith('.md') || !(await mayHavePrettierConfig(path.dirname(absolute), searched))
        ? null
        : await (await loadPrettier()).resolveConfig(absolute, { editorconfig: false }).catch(() => null);
    if (file.formatted && userConfig === null) {
      // Templates are kept in the house style in this repo (a test checks it), so formatting would be a no-op.
      out.push(file);
      continue;
    }
    const formatOpts = formatOptions(file.path, userConfig);
    const source = createHash('sha256').update(JSON.stringify([version, formatOpts])).update('\0').update(normalizeText(file.contents)).digest('hex');
    used.add(source);
    const reused = await previouslyFormatted(root, tracked.get(file.path), source);
    if (reused !== undefined) {
      out.push({ ...file, contents: reused, source });
      continue;
    }
    const known = formattedInProcess.get(source) ?? (await readCache(root, FORMAT_BUCKET, source));
    if (known !== undefined) {
      remember(source, known);
      out.push({ ...file, contents: known, source });
      continue;
    }
    try {
      const contents = await (await loadPrettier()).format(file.contents, userConfig === null ? withFastParser(formatOpts) : formatOpts);
      remember(source, contents);
      if (options.writeCache) await writeCache(root, FORMAT_BUCKET, source, contents);
      out.push({ ...file, contents, source });
    } catch {
      // Unparseable output is a bug elsewhere; keep it unformatted rather than lose it.
      out.push(file);
    }
  }
  if (options.writeCache) await pruneCache(root, FORMAT_BUCKET, used);
  return out;
}

/**
 * prettier picks its `typescript` parser for .ts files: a 3 MB bundle of the TypeScript compiler that is most of a
 * cold generate's formatting time. `babel-ts` reads the same syntax with the babel plugin (a quarter of the cost) and
 * prints the same AST, so for our own generated code (test/emit/tsParser.test.ts compares both on every fixture's
 * scaffolding) the output is byte-identical. Only in the house style: a user's config may bring plugins that hook
 * the `typescript` parser by name, and then prettier keeps choosing. The cache key (`source`) is unchanged because
 * the output is.
 */
export function withFastParser<T extends { filepath: string }>(options: T): T & { parser?: 'babel-ts' } {
  return /\.[cm]?ts$/.test(options.filepath) ? { ...options, parser: 'babel-ts' } : options;
}

function remember(source: string, contents: string): void {
  if (formattedInProcess.size >= 200) formattedInProcess.clear();
  formattedInProcess.set(source, contents);
}
