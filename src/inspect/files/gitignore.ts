import ignore, { type Ignore } from 'ignore';

/**
 * .gitignore matching through `ignore` (the matcher ESLint and Prettier rely on): git's rules, escapes and
 * character classes, and patterns compiled without the backtracking that made a hand-written matcher
 * exponential on inputs like `**\/**\/**\/…`.
 */
export type IgnoreRules = Ignore;

export function parseGitignore(text: string): IgnoreRules {
  return ignore({ allowRelativePaths: true }).add(text);
}

/** `relPath` is relative to the directory holding the rules, POSIX slashes. */
export function isIgnored(rules: IgnoreRules, relPath: string, isDir: boolean): boolean {
  try {
    return rules.ignores(isDir ? `${relPath}/` : relPath);
  } catch {
    // A path `ignore` cannot judge (not relative, say) is not ignored: inspecting it is the safe default.
    return false;
  }
}
