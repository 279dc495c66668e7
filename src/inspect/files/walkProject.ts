import { lstatSync, statSync, type Stats } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isAuxiliaryFile, isExcludedFileName, isSkippedDir, isSourceFile } from './classifyPath.js';
import { isIgnored, parseGitignore, type IgnoreRules } from './gitignore.js';
import { printable } from './printable.js';

export const MAX_FILE_BYTES = 1024 * 1024;

export interface ProjectFile {
  abs: string;
  /** Relative to the root, POSIX slashes. */
  rel: string;
  kind: 'source' | 'auxiliary';
}

export interface WalkResult {
  files: ProjectFile[];
  warnings: string[];
}

interface IgnoreScope {
  /** Relative dir (POSIX, '' for root) the rules were read from. */
  base: string;
  rules: IgnoreRules;
}

export interface WalkOptions {
  /**
   * The project's own test files instead of its sources: files under a test folder (test, tests, __tests__, e2e, spec,
   * specs) or named like a test (`*.test.ts`, `*.spec.js`, `*.e2e-spec.ts`); fixtures, mocks and browser suites are
   * still skipped. apply reads them to give their requests to protected routes a key.
   */
  tests?: boolean;
}

/** Folders whose files are tests when `tests` is asked for (fixtures, mocks and browser suites are not walked). */
const TEST_DIRS = new Set(['test', 'tests', '__tests__', 'e2e', 'spec', 'specs']);
const TEST_NAME = /\.(test|spec|e2e|e2e-spec|int-spec|integration)\.[cm]?[jt]sx?$/;

/**
 * Lists the files worth inspecting. Confined to the project: a symlink whose target lies outside the root (a link
 * to `/`, to the home folder, to /etc/passwd named like a source file) is reported, never followed. Symlinked
 * directories inside it are followed once (by real path) so a link loop cannot recurse forever; files over 1 MB
 * are skipped with a warning because they are generated or vendored. Names in warnings are escaped for the terminal.
 */
export async function walkProject(root: string, options: WalkOptions = {}): Promise<WalkResult> {
  const files: ProjectFile[] = [];
  const warnings: string[] = [];
  const realRoot = await realpath(root).catch(() => path.resolve(root));
  const inside = (real: string) => real === realRoot || real.startsWith(realRoot.endsWith(path.sep) ? realRoot : `${realRoot}${path.sep}`);
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  // Symlinked directories wait until every real directory is walked, so files are reported at their real path.
  const pendingLinks: Array<[string, string, IgnoreScope[]]> = [];

  async function visit(dirAbs: string, dirRel: string, scopes: IgnoreScope[]): Promise<void> {
    const real = await realpath(dirAbs).catch(() => dirAbs);
    if (seenDirs.has(real)) {
      warnings.push(`${printable(dirRel || '.')}: directory already visited through a symlink; not followed again.`);
      return;
    }
    seenDirs.add(real);
    let entries;
    try {
      entries = await readdir(dirAbs, { withFileTypes: true });
    } catch (error) {
      warnings.push(`${printable(dirRel || '.')}: cannot read directory (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
      return;
    }
    const gitignore = entries.some((e) => e.name === '.gitignore') ? await readFile(path.join(dirAbs, '.gitignore'), 'utf8').catch(() => '') : '';
    const active = gitignore.trim() ? [...scopes, { base: dirRel, rules: parseGitignore(gitignore) }] : scopes;
    // Sorted so the walk (and therefore warnings) is identical on every file system.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: Array<[string, string]> = [];
    for (const entry of entries) {
      const rel = dirRel ? `${dirRel}/${entry.name}` : entry.name;
      const abs = path.join(dirAbs, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      const isLink = entry.isSymbolicLink();
      if (isLink) {
        const real = await realpath(abs).catch(() => undefined);
        if (real === undefined) continue;
        if (!inside(real)) {
          warnings.push(`${printable(rel)}: symlink to a path outside the project; not followed.`);
          continue;
        }
        const target = await stat(real).catch(() => undefined);
        if (!target) continue;
        isDir = target.isDirectory();
        isFile = target.isFile();
      }
      if (ignoredBy(active, rel, isDir)) continue;
      if (isDir) {
        if (isSkippedDir(entry.name, rel) && !(options.tests && TEST_DIRS.has(entry.name))) continue;
        if (isLink) pendingLinks.push([abs, rel, active]);
        else subdirs.push([abs, rel]);
        continue;
      }
      if (!isFile) continue;
      const kind = isSourceFile(entry.name) ? 'source' : isAuxiliaryFile(entry.name) ? 'auxiliary' : undefined;
      if (options.tests) {
        const inTestDir = rel.split('/').slice(0, -1).some((part) => TEST_DIRS.has(part));
        if (kind !== 'source' || !(inTestDir || TEST_NAME.test(entry.name))) continue;
      } else if (!kind || isExcludedFileName(entry.name)) continue;
      const info = fileInfo(abs);
      if (!info) continue;
      if (info.size > MAX_FILE_BYTES) {
        warnings.push(`${printable(rel)}: skipped, larger than 1 MB (${Math.round(info.size / 1024)} KB); likely generated or bundled.`);
        continue;
      }
      const realFile = entry.isSymbolicLink() ? await realpath(abs).catch(() => abs) : abs;
      if (seenFiles.has(realFile)) continue;
      seenFiles.add(realFile);
      files.push({ abs, rel, kind });
    }
    for (const [abs, rel] of subdirs) await visit(abs, rel, active);
  }

  await visit(root, '', []);
  for (let i = 0; i < pendingLinks.length; i++) {
    const [abs, rel, scopes] = pendingLinks[i] as [string, string, IgnoreScope[]];
    await visit(abs, rel, scopes);
  }
  warnings.sort();
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, warnings };
}

/**
 * A file's size, following a link. Synchronous: one stat is a few microseconds, while the promise API's round trip
 * through libuv's threads, awaited once per file, made the walk mostly waiting (115 ms on medusa's 1,251 files,
 * against 66 ms asking a folder's files at once and less again this way).
 */
function fileInfo(abs: string): Stats | undefined {
  try {
    const info = lstatSync(abs);
    return info.isSymbolicLink() ? statSync(abs) : info;
  } catch {
    return undefined;
  }
}

function ignoredBy(scopes: readonly IgnoreScope[], rel: string, isDir: boolean): boolean {
  for (const scope of scopes) {
    const local = scope.base ? rel.slice(scope.base.length + 1) : rel;
    if (isIgnored(scope.rules, local, isDir)) return true;
  }
  return false;
}
