import { lintWithProjectESLint } from '../emit/lintFiles.js';
import type { FileChange } from './planApply.js';

/**
 * Lets the project's ESLint (with --fix) settle the style of what apply wrote: semicolons, quotes, commas. Only on a
 * new file or a file that was lint-clean before the edit, so no unrelated fix lands in the diff; any failure (no
 * config, a rule that needs type information, a crash) leaves the text as the transforms made it.
 */
export async function lintChanges(root: string, changes: readonly FileChange[]): Promise<FileChange[]> {
  const { fixed } = await lintWithProjectESLint(
    root,
    changes.map((change) => ({ path: change.path, text: change.after, ...(change.before === undefined ? {} : { cleanBefore: change.before }) })),
  );
  return changes.map((change, index) => {
    const after = fixed[index];
    return after === undefined ? change : { ...change, after };
  });
}
