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

/** The project's own ESLint class (flat or legacy config, its plugins), or none. Never installed: only resolved. */
async function projectESLint(root: string): Promise<ESLintClass | undefined> {
  try {
    const resolved = createRequire(path.join(root, 'package.json')).resolve('eslint');
    const loaded = (await import(pathToFileURL(resolved).href)) as { ESLint?: ESLintClass; default?: { ESLint?: ESLintClass } };
    return loaded.ESLint ?? loaded.default?.ESLint;
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
 * them. One ESLint instance (its config is loaded once) for the whole batch. A file its config ignores, and any
 * failure (no config, a rule that needs type information, a crash), leaves the text as it was.
 */
export async function lintWithProjectESLint(root: string, inputs: readonly LintInput[]): Promise<LintOutcome> {
  const fixed: Array<string | undefined> = inputs.map(() => undefined);
  if (inputs.length === 0) return { fixed, linted: 0 };
  const ESLint = await projectESLint(root);
  if (!ESLint) return { fixed, linted: 0 };
  let fixer: ProjectESLint;
  try {
    fixer = new ESLint({ cwd: root, fix: true });
  } catch {
    return { fixed, linted: 0 };
  }
  let linted = 0;
  for (const [index, input] of inputs.entries()) {
    const filePath = path.join(root, input.path);
    try {
      if (await fixer.isPathIgnored(filePath)) continue;
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
