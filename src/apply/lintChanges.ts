import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileChange } from './planApply.js';

interface LintResult {
  output?: string;
  errorCount: number;
}
interface ProjectESLint {
  lintText(code: string, options: { filePath: string }): Promise<LintResult[]>;
  isPathIgnored(filePath: string): Promise<boolean>;
}
type ESLintClass = new (options: { cwd: string; fix: boolean }) => ProjectESLint;

/** The project's own ESLint class (flat or legacy config, its plugins), or none. */
async function projectESLint(root: string): Promise<ESLintClass | undefined> {
  try {
    const resolved = createRequire(path.join(root, 'package.json')).resolve('eslint');
    const loaded = (await import(pathToFileURL(resolved).href)) as { ESLint?: ESLintClass; default?: { ESLint?: ESLintClass } };
    return loaded.ESLint ?? loaded.default?.ESLint;
  } catch {
    return undefined;
  }
}

/**
 * Lets the project's ESLint (with --fix) settle the style of what apply wrote: semicolons, quotes, commas. Only on a
 * new file or a file that was lint-clean before the edit, so no unrelated fix lands in the diff; any failure (no
 * config, a rule that needs type information, a crash) leaves the text as the transforms made it.
 */
export async function lintChanges(root: string, changes: readonly FileChange[]): Promise<FileChange[]> {
  const ESLint = await projectESLint(root);
  if (!ESLint) return [...changes];
  const out: FileChange[] = [];
  for (const change of changes) {
    const filePath = path.join(root, change.path);
    try {
      const fixer = new ESLint({ cwd: root, fix: true });
      if (await fixer.isPathIgnored(filePath)) {
        out.push(change);
        continue;
      }
      const clean = change.before === undefined || ((await fixer.lintText(change.before, { filePath }))[0]?.errorCount ?? 1) === 0;
      const fixed = clean ? (await fixer.lintText(change.after, { filePath }))[0]?.output : undefined;
      out.push(fixed === undefined ? change : { ...change, after: fixed });
    } catch {
      out.push(change);
    }
  }
  return out;
}
