import type { FunctionFacts, ImportBinding } from '../parse/indexSource.js';
import type { ProjectRecords } from './projectRecords.js';
import { resolveBinding, resolveExport, resolveImport, splitBindingKey } from './resolveModules.js';

/** One import of a file, as FunctionGraph matches keys against it. */
interface PreparedImport {
  local: string;
  lower: string;
  /** `lower.`: a key naming a member of the binding starts with it. */
  prefix: string;
  importedLower: string;
  binding: ImportBinding;
  /** Relative or aliased (`./x`, `@/x`, `~/x`, `#/x`). */
  projectPath: boolean;
  /** A module of the project (a project path, or a package of this workspace); never an installed dependency. */
  linkable: boolean;
  /** The file a namespace import (`*`) resolves to. */
  target?: string;
}

/**
 * A name-based call graph across files. Without a type checker (too slow for the budget), a call `x.create()`
 * is matched to functions by key: the caller's own file first, then every file defining that key.
 */
export class FunctionGraph {
  private readonly byKey = new Map<string, FunctionFacts[]>();
  /** resolve() answers by file, then key: the records no longer change once the graph exists. */
  private readonly resolved = new Map<string, Map<string, readonly FunctionFacts[]>>();
  /** Per function, every function one of its calls resolves to (for callers(), which asks again each round). */
  private readonly targets = new Map<FunctionFacts, ReadonlySet<FunctionFacts>>();
  private readonly lowerExports = new Map<string, Map<string, string>>();
  private readonly preparedImports = new Map<string, readonly PreparedImport[]>();

  constructor(private readonly records: ProjectRecords) {
    for (const record of records.files.values()) {
      for (const facts of record.functions.values()) {
        const list = this.byKey.get(facts.key);
        if (list) list.push(facts);
        else this.byKey.set(facts.key, [facts]);
      }
    }
  }

  /** Every function defined under this key, in any file. */
  definitions(key: string): readonly FunctionFacts[] {
    return this.byKey.get(key) ?? [];
  }

  /** Functions a key refers to when used from `file`. */
  resolve(file: string, key: string): readonly FunctionFacts[] {
    let byFile = this.resolved.get(file);
    if (!byFile) this.resolved.set(file, (byFile = new Map()));
    let found = byFile.get(key);
    if (!found) byFile.set(key, (found = this.resolveUncached(file, key)));
    return found;
  }

  private resolveUncached(file: string, key: string): readonly FunctionFacts[] {
    const local = this.records.files.get(file)?.functions.get(key);
    if (local) return [local];
    const viaImport = this.imported(file, key);
    if (viaImport) return [viaImport];
    // `handlers.create` through `import * as handlers from './x'`: that module says which one; another file's
    // `handlers.create` (or nothing, when the module was not parsed) is never it.
    if (this.namespaceBound(file, key)) return [];
    // `export { GET, POST } from '@/app/(auth)/auth'` (a route file handing its methods to NextAuth's handlers):
    // the module named says which one it is, even when it is no function we parsed; another file's POST never is.
    const reExported = this.reExported(file, key);
    if (reExported !== undefined) return reExported;
    const all = this.byKey.get(key) ?? [];
    // A generic name defined in many files (`handler`, `create`) says nothing about which one is meant.
    return all.length <= 3 ? all : [];
  }

  /** A plain key the file re-exports from another module by name: that module's function, or none. */
  private reExported(file: string, key: string): readonly FunctionFacts[] | undefined {
    if (key.includes('.')) return undefined;
    for (const re of this.records.files.get(file)?.reExports ?? []) {
      for (const [exported] of re.names ?? []) {
        if (exported.toLowerCase() !== key) continue;
        const found = resolveExport(this.records, file, exported);
        if (found === undefined) return [];
        const target = splitBindingKey(found);
        const fn = this.records.files.get(target.file)?.functions.get(target.name.toLowerCase());
        return fn ? [fn] : [];
      }
    }
    return undefined;
  }

  /**
   * The function a key names through one of the file's own imports (`import { create } from './create'`), followed
   * to the file that defines it: two routes files each importing their own `create` must not share body fields.
   */
  private imported(file: string, key: string): FunctionFacts | undefined {
    for (const entry of this.importsOf(file)) {
      const { local, lower, binding } = entry;
      // Only a binding the key can name is looked up (this runs for every unresolved callee of every function).
      if (binding.imported !== '*' && lower !== key && entry.importedLower !== key && !key.startsWith(entry.prefix)) continue;
      // Relative, aliased, or a package of this workspace (`@acme/lib/rate-limit`); never an installed dependency.
      if (!entry.linkable) continue;
      if (binding.imported === '*') {
        const fn = this.namespaceMember(file, entry, key);
        if (fn) return fn;
        continue;
      }
      if (lower === key || entry.importedLower === key) {
        const resolved = splitBindingKey(resolveBinding(this.records, file, local));
        const fn = this.records.files.get(resolved.file)?.functions.get(resolved.name.toLowerCase());
        if (fn) return fn;
      } else if (key.startsWith(entry.prefix)) {
        // `user.createUser` where `user` is an imported class (or object): its member, keyed under the name the class
        // is declared with (`export { default as user } from './user'` → `export default class UserController`).
        const resolved = splitBindingKey(resolveBinding(this.records, file, local));
        const fn = this.records.files.get(resolved.file)?.functions.get(`${resolved.name.toLowerCase()}${key.slice(local.length)}`);
        if (fn) return fn;
        // `emailService.sendVerificationEmail` where an index says `module.exports.emailService = require('./email.service')`.
        const member = key.slice(local.length + 1);
        const viaModule = member.includes('.') ? undefined : this.moduleMember(file, local, member, 0);
        if (viaModule) return viaModule;
      }
    }
    return undefined;
  }

  /**
   * A file's imports in order, with what every key asks of them worked out once: lower-cased names, whether the
   * module is one of the project's, and the file a namespace import resolves to.
   */
  private importsOf(file: string): readonly PreparedImport[] {
    let prepared = this.preparedImports.get(file);
    if (!prepared) {
      const entries: PreparedImport[] = [];
      for (const [local, binding] of this.records.files.get(file)?.imports ?? []) {
        const lower = local.toLowerCase();
        const projectPath = binding.module.startsWith('.') || /^[@~#]\//.test(binding.module);
        const linkable = projectPath || resolveImport(this.records, file, binding.module) !== undefined;
        const target = binding.imported === '*' && linkable ? resolveImport(this.records, file, binding.module) : undefined;
        entries.push({ local, lower, prefix: `${lower}.`, importedLower: binding.imported.toLowerCase(), binding, projectPath, linkable, ...(target !== undefined ? { target } : {}) });
      }
      this.preparedImports.set(file, (prepared = entries));
    }
    return prepared;
  }

  /**
   * `member` of the module a binding stands for, following the files that pass the binding on by name until one
   * takes it as a whole module (`const { emailService } = require('../services')`, whose index says
   * `module.exports.emailService = require('./email.service')`).
   */
  private moduleMember(file: string, local: string, member: string, depth: number): FunctionFacts | undefined {
    if (depth > 4) return undefined;
    const binding = this.records.files.get(file)?.imports.get(local);
    if (!binding || (!binding.module.startsWith('.') && !/^[@~#]\//.test(binding.module))) return undefined;
    const target = resolveImport(this.records, file, binding.module);
    if (!target) return undefined;
    if (binding.imported === '*') {
      const exported = this.exportsByLowerName(target).get(member);
      const key = exported === undefined ? undefined : resolveExport(this.records, target, exported);
      if (key === undefined) return undefined;
      const resolved = splitBindingKey(key);
      return this.records.files.get(resolved.file)?.functions.get(resolved.name.toLowerCase());
    }
    const passedOn = this.records.files.get(target)?.exports.get(binding.imported);
    return passedOn === undefined ? undefined : this.moduleMember(target, passedOn, member, depth + 1);
  }

  private namespaceBound(file: string, key: string): boolean {
    const dot = key.indexOf('.');
    if (dot < 0) return false;
    const ns = key.slice(0, dot);
    return this.importsOf(file).some((entry) => entry.binding.imported === '*' && entry.lower === ns && entry.projectPath);
  }

  /**
   * `handlers.create` (or the bare `create` a route records beside it) through `import * as handlers from './x'`:
   * the module's own export, so two routers each importing their own handlers module never share body fields.
   */
  private namespaceMember(file: string, entry: PreparedImport, key: string): FunctionFacts | undefined {
    const member = key.startsWith(entry.prefix) ? key.slice(entry.prefix.length) : key;
    const exported = entry.target !== undefined ? this.exportsByLowerName(entry.target).get(member) : undefined;
    if (exported === undefined) return undefined;
    const resolved = splitBindingKey(resolveBinding(this.records, file, entry.local, exported));
    return this.records.files.get(resolved.file)?.functions.get(resolved.name.toLowerCase());
  }

  /** A file's export names by lower-cased name, the first of each in export order (what a search would find). */
  private exportsByLowerName(file: string): ReadonlyMap<string, string> {
    let names = this.lowerExports.get(file);
    if (!names) {
      names = new Map();
      for (const name of this.records.files.get(file)?.exports.keys() ?? []) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
      this.lowerExports.set(file, names);
    }
    return names;
  }

  /** Functions reachable from the given entry keys within `depth` calls, entries included. */
  reachable(file: string, keys: readonly string[], depth = 3): FunctionFacts[] {
    const seen = new Set<FunctionFacts>();
    let frontier: Array<[string, string]> = keys.map((k) => [file, k]);
    for (let level = 0; level <= depth && frontier.length; level++) {
      const next: Array<[string, string]> = [];
      for (const [from, key] of frontier) {
        for (const fn of this.resolve(from, key)) {
          if (seen.has(fn)) continue;
          seen.add(fn);
          for (const callee of fn.callees) next.push([fn.file, callee]);
        }
      }
      frontier = next;
    }
    return [...seen];
  }

  /**
   * The seed functions and every function that (transitively, through at most 8 levels) calls one of them: the
   * functions that make a payment call or reach one, or that reach a signature check.
   */
  callers(seeds: Iterable<[string, string]>): Set<FunctionFacts> {
    const paying = new Set<FunctionFacts>();
    for (const [file, key] of seeds) {
      const fn = this.records.files.get(file)?.functions.get(key);
      if (fn) paying.add(fn);
    }
    // Nothing can reach an empty set: the rounds below would resolve every call in the project to learn that.
    if (paying.size === 0) return paying;
    for (let round = 0; round < 8; round++) {
      let changed = false;
      for (const list of this.byKey.values()) {
        for (const fn of list) {
          if (paying.has(fn)) continue;
          for (const target of this.targetsOf(fn)) {
            if (paying.has(target)) {
              paying.add(fn);
              changed = true;
              break;
            }
          }
        }
      }
      if (!changed) break;
    }
    return paying;
  }

  private targetsOf(fn: FunctionFacts): ReadonlySet<FunctionFacts> {
    let found = this.targets.get(fn);
    if (!found) {
      const all = new Set<FunctionFacts>();
      for (const callee of fn.callees) for (const target of this.resolve(fn.file, callee)) all.add(target);
      this.targets.set(fn, (found = all));
    }
    return found;
  }

  text(fn: FunctionFacts): string {
    return this.records.files.get(fn.file)?.text.slice(fn.start, fn.end) ?? '';
  }
}
