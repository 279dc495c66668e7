import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type * as Prettier from 'prettier';
import { formatOptions } from '../../emit/format.js';
import { oldJestJavaScript, oldJestVariant, type OldJestTraits } from '../profile/javascriptProfile.js';
import { toBareBuiltins } from '../profile/bareBuiltins.js';
import { bindSandboxGlobals } from '../profile/jestSandbox.js';
import { CONTRACT_FILE } from '../typescriptRuntime.js';
import type { SuiteWithHoles } from './renderedSuites.js';
import { pieceSource, printSuiteImports, suiteForm, suitePieces, withoutMarks } from './suiteJavaScript.js';
import { loadTypeScript, transpileSuiteToJavaScript, transpileToJavaScript, type ModuleType } from './transpile.js';

/**
 * The verbatim runtime templates as JavaScript, made once by `npm run build` (scripts/precompile-templates.mjs) and
 * shipped as dist/scaffold/javascript/precompiled.json: types stripped, in each module format, already in the house
 * style. A JavaScript generate then transpiles and formats only the files it renders from the design. Entries are
 * keyed by the TypeScript text, so a template that changed since the build simply misses and is transpiled as before.
 */
export type PrecompiledTable = ReadonlyMap<string, string>;

/** `file`: a module as the project loads it; `suite`: a vitest suite, an ES module in every project (transpile.ts). */
export type PrecompiledForm = 'file' | 'suite';

export const precompiledKey = (source: string, moduleType: ModuleType, form: PrecompiledForm = 'file'): string =>
  createHash('sha256').update(`${form === 'suite' ? 'suite\0' : ''}${moduleType}\0${source}`).digest('hex');

let table: PrecompiledTable | null | undefined;
/** Tests replaced the table: it holds the suites' pieces too. */
let replaced = false;
const suiteTables = new Map<string, PrecompiledTable | null>();

/** Tests: use this table (templates and suites alike) instead of the shipped ones (undefined: back to those). */
export function usePrecompiledTable(replacement: PrecompiledTable | undefined): void {
  table = replacement;
  replaced = replacement !== undefined;
  suiteTables.clear();
}

/** The house-style JavaScript for a template's text, when the build made it. */
export function precompiledJavaScript(source: string, moduleType: ModuleType, form: PrecompiledForm = 'file'): string | undefined {
  if (table === undefined) table = readTable('./precompiled.json');
  return table?.get(precompiledKey(source, moduleType, form));
}

/**
 * The same for a suite's piece or an adapted suite (suiteJavaScript.ts), from the build's table for one runner and
 * module format: a generate reads the one its project needs, an eighth of them.
 */
export function precompiledSuiteJavaScript(source: string, moduleType: ModuleType, runner: string, form: PrecompiledForm): string | undefined {
  if (replaced) return table?.get(precompiledKey(source, moduleType, form));
  const bucket = suiteBucket(runner, moduleType);
  let suites = suiteTables.get(bucket);
  if (suites === undefined) {
    suites = readTable(`./suites/${bucket}.json`);
    suiteTables.set(bucket, suites);
  }
  return suites?.get(precompiledKey(source, moduleType, form));
}

let profiles: PrecompiledTable | null | undefined;

/**
 * A file the build precompiled with an old Jest's edits applied (profile/javascriptProfile.ts) where they change
 * prettier's layout: the compiler's edits and prettier's output, from dist/scaffold/javascript/jest-profiles.json,
 * read only when such a file is met.
 */
export function precompiledProfileJavaScript(javascript: string, variant: string): string | undefined {
  if (replaced) return table?.get(profileKey(javascript, variant));
  if (profiles === undefined) profiles = readTable('./jest-profiles.json');
  return profiles?.get(profileKey(javascript, variant));
}

export const profileKey = (javascript: string, variant: string): string => createHash('sha256').update(`profile\0${variant}\0${javascript}`).digest('hex');

/** Which table of the build holds a runner's suites in a module format. */
export const suiteBucket = (runner: string, moduleType: ModuleType): string => `${runner}-${moduleType}`;

function readTable(file: string): PrecompiledTable | null {
  try {
    const raw = JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as { files?: Record<string, string> };
    return new Map(Object.entries(raw.files ?? {}));
  } catch {
    // Running from src (tests) or an unbuilt checkout: every file is transpiled on use.
    return null;
  }
}

const MODULE_TYPES: readonly ModuleType[] = ['module', 'commonjs'];

/**
 * Every `.ts` template under `templatesDir`, in each module format, transpiled and formatted as generate would: a
 * suite (`*.test.ts`, or a template in `suiteTemplates`, e.g. the store contract the suites run) in the form generate
 * gives a vitest suite, every other template as a module of the project.
 */
export async function buildPrecompiledTable(
  templatesDir: string,
  suiteTemplates: readonly string[] = [CONTRACT_FILE.template],
  /** Rendered vitest suites that do not depend on the design (renderedSuites.ts), precompiled the same way. */
  renderedSuites: ReadonlyArray<{ name: string; source: string }> = [],
): Promise<Map<string, string>> {
  const prettier = await import('prettier');
  const entries = await readdir(templatesDir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => path.join(entry.parentPath, entry.name));
  const suites = new Set(suiteTemplates.map((template) => path.resolve(templatesDir, '..', template)));
  const out = new Map<string, string>();
  for (const file of files.sort()) {
    const source = (await readFile(file, 'utf8')).replace(/\r\n/g, '\n');
    const name = path.basename(file);
    const suite = name.endsWith('.test.ts') || suites.has(path.resolve(file));
    for (const moduleType of MODULE_TYPES) {
      const js = suite ? transpileSuiteToJavaScript(source, moduleType, name) : transpileToJavaScript(source, moduleType, name);
      out.set(precompiledKey(source, moduleType, suite ? 'suite' : 'file'), await prettier.format(js, formatOptions(name.replace(/\.ts$/, '.js'))));
    }
  }
  for (const { name, source } of renderedSuites) {
    for (const moduleType of MODULE_TYPES) {
      const js = transpileSuiteToJavaScript(source, moduleType, name);
      out.set(precompiledKey(source, moduleType, 'suite'), await prettier.format(js, formatOptions(name.replace(/\.ts$/, '.js'))));
    }
  }
  return out;
}

/**
 * For whole files the build precompiled, the old Jest profiles' output where the direct reading cannot vouch for
 * prettier's layout: the compiler's edits (bindSandboxGlobals, toBareBuiltins) then prettier, as generate gave
 * before. Where the direct reading does vouch, the build checks it against the same and refuses a difference.
 */
export async function buildProfileTable(javascripts: Iterable<string>): Promise<Map<string, string>> {
  const prettier = await import('prettier');
  const ts = loadTypeScript();
  const out = new Map<string, string>();
  const variants: OldJestTraits[] = [
    { sandbox: true, bare: true, style: 'require' },
    { sandbox: true, bare: true, style: 'import' },
    { sandbox: true, bare: false, style: 'require' },
    { sandbox: true, bare: false, style: 'import' },
    { sandbox: false, bare: true, style: 'require' },
  ];
  for (const javascript of new Set(javascripts)) {
    for (const traits of variants) {
      let edited = traits.sandbox ? bindSandboxGlobals(ts, javascript, 'module.js', traits.style) : javascript;
      if (traits.bare) edited = toBareBuiltins(ts, edited, 'module.js');
      if (edited === javascript) continue;
      const formatted = await prettier.format(edited, formatOptions('module.js'));
      const direct = oldJestJavaScript(javascript, traits, () => undefined);
      if (direct?.keepsLayout && direct.code !== formatted) throw new Error(`bug: an old Jest's profile (${oldJestVariant(traits)}) read directly gives\n${direct.code}\nbut the compiler and prettier\n${formatted}`);
      if (direct && !direct.keepsLayout && direct.code !== edited) throw new Error(`bug: an old Jest's profile (${oldJestVariant(traits)}) read directly gives\n${direct.code}\nbut the compiler\n${edited}`);
      if (!direct?.keepsLayout) out.set(profileKey(javascript, oldJestVariant(traits)), formatted);
    }
  }
  return out;
}

/**
 * The test suites' JavaScript, by table (suiteBucket): each piece of idempotency.test.ts rendered with holes, and
 * the suites adapted to another runner than vitest (renderedSuites.ts), precompiled whole as modules of the project.
 */
export async function buildSuiteTables(
  suitesWithHoles: readonly SuiteWithHoles[],
  adaptedSuites: ReadonlyArray<{ name: string; source: string; runner: string }>,
): Promise<Map<string, Map<string, string>>> {
  const prettier = await import('prettier');
  const tables = new Map<string, Map<string, string>>();
  const tableOf = (runner: string, moduleType: ModuleType) => {
    const bucket = suiteBucket(runner, moduleType);
    if (!tables.has(bucket)) tables.set(bucket, new Map());
    return tables.get(bucket)!;
  };
  for (const { name, source, runner } of adaptedSuites) {
    for (const moduleType of MODULE_TYPES) {
      tableOf(runner, moduleType).set(precompiledKey(source, moduleType, 'file'), await prettier.format(transpileToJavaScript(source, moduleType, name), formatOptions(name.replace(/\.ts$/, '.js'))));
    }
  }
  for (const suite of suitesWithHoles) {
    const out = tableOf(suite.runner, suite.moduleType);
    for (const [key, js] of await precompileSuitePieces(suite, prettier)) {
      if (out.has(key) && out.get(key) !== js) throw new Error(`bug: one piece of ${suite.name} gives two JavaScript texts:\n${out.get(key)}\n---\n${js}`);
      out.set(key, js);
    }
  }
  return tables;
}

/**
 * A suite with holes transpiled and formatted whole, as generate would, then cut at its marks: each piece's
 * JavaScript keyed by its TypeScript. The build checks what the direct printer relies on: the marks change nothing
 * else in the output, and the imports it prints are the compiler's.
 */
async function precompileSuitePieces(suite: SuiteWithHoles, prettier: typeof Prettier): Promise<Array<[string, string]>> {
  const { name, moduleType, runner } = suite;
  const form = suiteForm(runner);
  const javaScriptOf = async (source: string) => {
    const js = form === 'suite' ? transpileSuiteToJavaScript(source, moduleType, name) : transpileToJavaScript(source, moduleType, name);
    return prettier.format(js, formatOptions(name.replace(/\.ts$/, '.js')));
  };
  const marked = await javaScriptOf(suite.source);
  const plain = await javaScriptOf(withoutMarks(suite.source));
  if (withoutMarks(marked) !== plain) throw new Error(`bug: the marks in ${name} change its JavaScript (${moduleType}, ${form})`);
  const typescript = suitePieces(suite.source);
  const javascript = suitePieces(marked);
  if (typescript.length !== javascript.length) throw new Error(`bug: ${name} has ${typescript.length} pieces, its JavaScript ${javascript.length}`);
  const body = javascript.slice(1).join('');
  const imports = printSuiteImports(typescript[0]!, body, moduleType, form);
  if (imports !== javascript[0]) throw new Error(`bug: ${name}'s imports print as\n${imports}\nbut the compiler gives\n${javascript[0]}`);
  return typescript.slice(1).map((piece, index) => [precompiledKey(pieceSource(piece, runner), moduleType, form), javascript[index + 1]!]);
}
