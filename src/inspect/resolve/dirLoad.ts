import path from 'node:path';
import type { DirLoad, FileNameOp, FileNamePart, FileNameTest } from '../detectors/detectorTypes.js';

/** The name a TypeScript source has once compiled, which a loop testing for `.js` sees at run time. */
const COMPILED: Record<string, string> = { '.ts': '.js', '.tsx': '.js', '.mts': '.mjs', '.cts': '.cjs' };
const SOURCE_EXTENSION = /\.(c|m)?[jt]sx?$/;

/**
 * The project files a readdir loop (readdirLoops.ts) loads, each with its mount path, null when the loop does not
 * say it. The directory's entries are its script files (but the loader) and its folders; an entry is loaded when it
 * passes the loop's tests under its name, or for a TypeScript file under its compiled name (a loop often tests for
 * `.js`), and is not skipped by name under either; the module is what the loop's specifier gives for that name
 * (`./modules/${dir}/router`), resolved as an import is, or the file itself.
 */
export function loadedByLoop(files: Iterable<string>, loader: string, load: DirLoad, resolve: (from: string, spec: string) => string | undefined): Array<{ file: string; prefix: string | null }> {
  const out: Array<{ file: string; prefix: string | null }> = [];
  for (const entry of entriesOf(files, load.dir)) {
    if (entry.file === loader) continue;
    if (entry.names.some((name) => load.accept.some((clause) => clause.length === 1 && skips(clause[0]!, name)))) continue;
    const passing = entry.names.filter((name) => load.accept.every((clause) => clause.some((test) => holds(test, name))));
    // `file.replace(/\.js$/, '')` on orders.ts leaves the extension: the spelling the loop strips is the one it runs.
    const name = passing.find((n) => !SOURCE_EXTENSION.test(fill(load.prefix ?? [], n))) ?? passing[0];
    if (name === undefined) continue;
    const file = load.module ? resolve(loader, fill(load.module, name)) : entry.file;
    if (!file || file === loader) continue;
    const prefix = load.prefix === null ? null : fill(load.prefix, name);
    out.push({ file, prefix: prefix === '/' ? '' : prefix });
  }
  return out;
}

/** A directory's entries as readdir lists them: its files (with the names a loop may test) and its folders. */
function entriesOf(files: Iterable<string>, dir: string): Array<{ names: string[]; file?: string }> {
  const out: Array<{ names: string[]; file?: string }> = [];
  const folders = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(`${dir}/`)) continue;
    const [first, ...rest] = file.slice(dir.length + 1).split('/');
    if (rest.length > 0) folders.add(first!);
    else if (SOURCE_EXTENSION.test(file) && !/\.d\.(c|m)?ts$/.test(file)) {
      const ext = path.posix.extname(first!);
      out.push({ names: [first!, ...(COMPILED[ext] ? [first!.slice(0, -ext.length) + COMPILED[ext]] : [])], file });
    }
  }
  return [...out, ...[...folders].sort().map((folder) => ({ names: [folder] }))];
}

const fill = (parts: readonly FileNamePart[], name: string): string => parts.map((part) => (typeof part === 'string' ? part : applyOps(part, name))).join('');

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
