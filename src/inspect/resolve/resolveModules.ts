import path from 'node:path';
import type { OwnerRef } from '../detectors/detectorTypes.js';
import type { ProjectRecords } from './projectRecords.js';

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

/** What resolving a specifier needs of the project: the parsed files, each file's package folder, the workspace packages. */
export interface ModuleFiles {
  has(rel: string): boolean;
  pkgDir(rel: string): string;
  packagesByName: ReadonlyMap<string, string>;
  /** tsconfig `paths` folder aliases, tried before the conventions below. */
  aliases?: ReadonlyArray<{ readonly prefix: string; readonly dir: string }>;
}

/**
 * Resolves imports between inspected files without touching the disk: relative specifiers (including the
 * `.js`-for-`.ts` ESM convention), `@/` and `~/` aliases to the package's src, workspace package names, and paths
 * under tsconfig's `baseUrl`. inspect and the findings engine's code facts share it, so both follow the same imports.
 */
export function resolveSpecifier(files: ModuleFiles, from: string, spec: string): string | undefined {
  const pkgDir = files.pkgDir(from);
  const join = (...parts: string[]) => path.posix.normalize(path.posix.join(...parts)).replace(/^\.\//, '');
  const bases: string[] = [];
  const alias = spec.startsWith('.') ? undefined : files.aliases?.find((a) => spec.startsWith(a.prefix));
  if (alias) bases.push(join(alias.dir || '.', spec.slice(alias.prefix.length)));
  if (spec.startsWith('.')) bases.push(join(path.posix.dirname(from), spec));
  else if (/^[@~#]\//.test(spec)) {
    const rest = spec.slice(2);
    bases.push(join(pkgDir || '.', 'src', rest), join(pkgDir || '.', rest));
  } else {
    for (const [name, dir] of files.packagesByName) {
      if (spec === name) bases.push(join(dir, 'src/index'), join(dir, 'index'), join(dir, 'src/main'));
      else if (spec.startsWith(`${name}/`)) {
        const sub = spec.slice(name.length + 1);
        bases.push(join(dir, 'src', sub), join(dir, sub));
      }
    }
  }
  for (const base of bases) {
    const found = probe(files, base);
    if (found) return found;
  }
  // `src/payment/x` (or `src` itself) under tsconfig's `baseUrl: "./"` (NestJS's default): a path into the package.
  // Only a path with a folder, and only to a file that was inspected, so a package import is never taken for one.
  if (bases.length === 0 && (/^[\w.-]+\//.test(spec) || spec === 'src')) return probe(files, join(pkgDir || '.', spec));
  return undefined;
}

/**
 * Memoised per project and file count: the cross-file phase asks the same (file, specifier) for every call and
 * import it follows, and the records only ever grow (while files are analysed, before anything resolves).
 */
export function resolveImport(records: ProjectRecords, from: string, spec: string): string | undefined {
  let memo = resolved.get(records);
  if (!memo || memo.size !== records.files.size) resolved.set(records, (memo = { size: records.files.size, answers: new Map() }));
  const key = `${from}\u0000${spec}`;
  if (memo.answers.has(key)) return memo.answers.get(key);
  const answer = resolveSpecifier(moduleFilesOf(records), from, spec);
  memo.answers.set(key, answer);
  return answer;
}

const resolved = new WeakMap<ProjectRecords, { size: number; answers: Map<string, string | undefined> }>();

const recordFiles = new WeakMap<ProjectRecords, ModuleFiles>();

function moduleFilesOf(records: ProjectRecords): ModuleFiles {
  let files = recordFiles.get(records);
  if (!files) {
    files = { has: (rel) => records.files.has(rel), pkgDir: (rel) => records.files.get(rel)?.pkgDir ?? '', packagesByName: records.packagesByName, ...(records.aliases ? { aliases: records.aliases } : {}) };
    recordFiles.set(records, files);
  }
  return files;
}

function probe(files: ModuleFiles, base: string): string | undefined {
  const candidates = [base, base.replace(/\.(c|m)?js$/, '.$1ts'), base.replace(/\.jsx$/, '.tsx')];
  for (const ext of EXTENSIONS) candidates.push(base + ext, `${base}/index${ext}`);
  return candidates.find((c) => files.has(c));
}

/** `src/a.ts::name` (a key resolveBinding returns) → its file and the name there. */
export function splitBindingKey(key: string): { file: string; name: string } {
  const at = key.lastIndexOf('::');
  return { file: key.slice(0, at), name: key.slice(at + 2) };
}

/** Key of the binding `name` in `file`, following imports and re-exports to where it is defined. */
export function resolveBinding(records: ProjectRecords, file: string, name: string, member?: string, depth = 0): string {
  const record = records.files.get(file);
  const imported = record?.imports.get(name);
  if (imported && depth < 8) {
    const target = resolveImport(records, file, imported.module);
    if (target) {
      const exportName = member ?? (imported.imported === '*' ? 'default' : imported.imported);
      const viaNamespace = member !== undefined && imported.imported !== '*' && imported.imported !== 'default';
      if (!viaNamespace) return resolveExport(records, target, exportName, depth + 1) ?? `${target}::${exportName === 'default' ? '<default>' : exportName}`;
    }
  }
  return `${file}::${name}`;
}

export function resolveExport(records: ProjectRecords, file: string, exportName: string, depth = 0): string | undefined {
  const record = records.files.get(file);
  if (!record || depth > 8) return undefined;
  const local = record.exports.get(exportName);
  if (local !== undefined) return resolveBinding(records, file, local, undefined, depth + 1);
  for (const re of record.reExports) {
    const target = resolveImport(records, file, re.module);
    if (!target) continue;
    if (re.names) {
      const original = re.names.get(exportName);
      if (original !== undefined) return resolveExport(records, target, original, depth + 1) ?? `${target}::${original}`;
    } else if (exportName !== 'default') {
      const found = resolveExport(records, target, exportName, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

export function ownerKey(records: ProjectRecords, ref: OwnerRef): string {
  if (ref.module !== undefined) {
    const target = resolveImport(records, ref.file, ref.module);
    if (!target) return `${ref.file}::require(${ref.module})`;
    return resolveExport(records, target, ref.member ?? 'default') ?? `${target}::<default>`;
  }
  return resolveBinding(records, ref.file, ref.name ?? '?', ref.member);
}
