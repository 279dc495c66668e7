import path from 'node:path';
import type { DirLoad, FileNameOp, FileNameTest } from '../detectors/detectorTypes.js';

/** The name a TypeScript source has once compiled, which a loop testing for `.js` sees at run time. */
const COMPILED: Record<string, string> = { '.ts': '.js', '.tsx': '.js', '.mts': '.mjs', '.cts': '.cjs' };
const SOURCE_EXTENSION = /\.(c|m)?[jt]sx?$/;

/**
 * The project files a readdir loop (readdirLoops.ts) loads, each with its mount path, null when the loop does not
 * say it: the directory's own script files but the loader, that pass the loop's tests under their source name or
 * their compiled one (a TypeScript project's loop often tests for `.js`). A file the loop names to skip under either
 * name is skipped.
 */
export function loadedByLoop(files: Iterable<string>, loader: string, load: DirLoad): Array<{ file: string; prefix: string | null }> {
  const out: Array<{ file: string; prefix: string | null }> = [];
  for (const file of files) {
    if (path.posix.dirname(file) !== load.dir || file === loader || !SOURCE_EXTENSION.test(file) || /\.d\.(c|m)?ts$/.test(file)) continue;
    const base = path.posix.basename(file);
    const ext = path.posix.extname(base);
    const names = [base, ...(COMPILED[ext] ? [base.slice(0, -ext.length) + COMPILED[ext]] : [])];
    if (names.some((name) => load.accept.some((clause) => clause.length === 1 && skips(clause[0]!, name)))) continue;
    const passing = names.filter((name) => load.accept.every((clause) => clause.some((test) => holds(test, name))));
    if (passing.length === 0) continue;
    const { prefix } = load;
    const paths = passing.map((name) => (prefix === null ? null : prefix.map((part) => (typeof part === 'string' ? part : applyOps(part, name))).join('')));
    // `file.replace(/\.js$/, '')` on orders.ts leaves the extension: the spelling the loop strips is the one it runs.
    const chosen = paths.find((p) => p !== null && !SOURCE_EXTENSION.test(p)) ?? paths[0] ?? null;
    out.push({ file, prefix: chosen === '/' ? '' : chosen });
  }
  return out;
}

/** `file !== 'index.js'`: a name the loop leaves out by name. */
const skips = (test: FileNameTest, name: string): boolean => test.is === 'equals' && test.negate === true && test.name.length === 0 && test.value === name;

function holds(test: FileNameTest, name: string): boolean {
  const value = applyOps(test.name, name);
  const regex = test.is === 'matches' ? pattern(test.value, test.flags) : undefined;
  if (test.is === 'matches' && !regex) return true;
  let result: boolean;
  if (test.is === 'equals') result = value === test.value;
  else if (test.is === 'endsWith') result = value.endsWith(test.value);
  else if (test.is === 'startsWith') result = value.startsWith(test.value);
  else if (test.is === 'includes') result = value.includes(test.value);
  else result = regex!.test(value);
  return result !== (test.negate === true);
}

function applyOps(ops: readonly FileNameOp[], name: string): string {
  let value = name;
  for (const op of ops) {
    if ('replace' in op) value = value.replace(pattern(op.replace, op.flags) ?? op.replace, op.with);
    else if ('basename' in op) value = op.basename !== '' && value.endsWith(op.basename) ? value.slice(0, -op.basename.length) : value;
    else if ('stem' in op) value = value.slice(0, value.length - path.posix.extname(value).length);
    else if ('extname' in op) value = path.posix.extname(value);
    else if ('split' in op) value = value.split(op.split)[op.index] ?? '';
    else if ('slice' in op) value = value.slice(...op.slice);
    else value = value.toLowerCase();
  }
  return value;
}

/** The loop's own regular expression; one this engine cannot compile tests nothing (the file is kept). */
function pattern(source: string, flags = ''): RegExp | undefined {
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}
