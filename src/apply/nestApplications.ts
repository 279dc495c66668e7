import path from 'node:path';
import { ts } from 'ts-morph';
import { readInside } from '../emit/safePath.js';
import type { PathAlias } from '../scaffold/profile/pathAliases.js';

/** A module some `NestFactory` call boots, and the file declaring it. */
export interface NestRoot {
  file: string;
  name: string;
}

/** What apply needs to know of the Nest applications in a project: plain data, no compiler node escapes. */
export interface NestApplications {
  /** Every module booted by NestFactory.create / createMicroservice / createApplicationContext, sorted by file. */
  roots: NestRoot[];
  /**
   * The roots whose application registers the class holding `line` of `file` (in `controllers` or `providers` of the
   * root or of a module it imports, transitively); empty when none of the modules apply can read lists it.
   */
  rootsOf(file: string, line: number): Promise<NestRoot[]>;
  /** Whether `outer`'s application imports the module `inner` (so a provider registered in inner runs there too). */
  imports(outer: NestRoot, inner: NestRoot): boolean;
}

interface ModuleDeclaration {
  /** `file#Class` keys of the classes listed in controllers and providers. */
  members: string[];
  /** `file#Class` keys of the imported modules apply could read (forRoot() calls and spreads are skipped). */
  imports: string[];
}

const BOOT = /NestFactory\.(?:create|createMicroservice|createApplicationContext)\s*(?:<[^>]*>)?\(\s*([A-Za-z_$][\w$]*)/g;
/** Test and spec files boot test modules; their roots count only when the project has no other (today's behaviour). */
const TEST_FILE = /(^|\/)(test|tests|__tests__)\/|\.(spec|test|e2e-spec)\.[cm]?ts$/;
const key = (file: string, name: string) => `${file}#${name}`;
const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

/**
 * Reads the Nest module graph of the project: which modules are booted, what each lists, and which modules it imports,
 * with class names resolved to their files through each file's own imports (two apps may both call theirs AppModule).
 */
export async function readNestApplications(root: string, files: readonly string[], aliases: readonly PathAlias[], scaffoldDir: string): Promise<NestApplications> {
  const known = new Set(files);
  const sources = new Map<string, ts.SourceFile | undefined>();
  const sourceOf = async (file: string) => {
    if (!sources.has(file)) {
      const text = await readInside(root, file).catch(() => undefined);
      sources.set(file, text === undefined ? undefined : parse(file, text));
    }
    return sources.get(file);
  };
  const resolve = async (file: string, name: string) => resolveClass(file, name, { known, aliases, sourceOf });

  const modules = new Map<string, ModuleDeclaration>();
  const boots: Array<{ file: string; name: string; test: boolean }> = [];
  for (const file of files) {
    if (!/\.(m|c)?ts$/.test(file) || file.endsWith('.d.ts') || file.startsWith(`${scaffoldDir}/`)) continue;
    const text = await readInside(root, file).catch(() => undefined);
    if (!text || (!text.includes('@Module(') && !text.includes('NestFactory'))) continue;
    const sf = parse(file, text);
    sources.set(file, sf);
    for (const match of text.matchAll(BOOT)) boots.push({ file, name: match[1]!, test: TEST_FILE.test(file) });
    for (const [name, lists] of moduleClasses(sf)) {
      const resolveAll = async (names: string[]) => (await Promise.all(names.map((n) => resolve(file, n)))).filter((k): k is string => k !== undefined);
      modules.set(key(file, name), { members: await resolveAll(lists.members), imports: await resolveAll(lists.imports) });
    }
  }

  const roots = new Map<string, NestRoot>();
  const booted = boots.some((b) => !b.test) ? boots.filter((b) => !b.test) : boots;
  for (const boot of booted) {
    // Resolved through the booting file's imports; failing that, the one module declared under that name.
    const found = await resolve(boot.file, boot.name);
    const declaring = found && modules.has(found) ? [found] : [...modules.keys()].filter((k) => k.endsWith(`#${boot.name}`));
    if (declaring.length === 1) roots.set(declaring[0]!, { file: declaring[0]!.slice(0, declaring[0]!.lastIndexOf('#')), name: boot.name });
  }

  const closure = new Map<string, Set<string>>();
  const modulesOf = (rootKey: string) => {
    let seen = closure.get(rootKey);
    if (seen) return seen;
    seen = new Set<string>();
    const queue = [rootKey];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (seen.has(next) || !modules.has(next)) continue;
      seen.add(next);
      queue.push(...modules.get(next)!.imports);
    }
    closure.set(rootKey, seen);
    return seen;
  };
  const sorted = [...roots].sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    roots: sorted.map(([, r]) => r),
    async rootsOf(file, line) {
      const sf = await sourceOf(file);
      const cls = sf ? enclosingClass(sf, line) : undefined;
      if (!cls) return [];
      const target = key(file, cls);
      return sorted.filter(([rootKey]) => [...modulesOf(rootKey)].some((m) => m === target || modules.get(m)!.members.includes(target))).map(([, r]) => r);
    },
    imports: (outer, inner) => modulesOf(key(outer.file, outer.name)).has(key(inner.file, inner.name)),
  };
}

/** The classes decorated `@Module({...})` in a file, with the names their lists spell out. */
function moduleClasses(sf: ts.SourceFile): Map<string, { members: string[]; imports: string[] }> {
  const out = new Map<string, { members: string[]; imports: string[] }>();
  for (const statement of sf.statements) {
    if (!ts.isClassDeclaration(statement) || !statement.name) continue;
    const decorator = ts.getDecorators(statement)?.find((d) => ts.isCallExpression(d.expression) && ts.isIdentifier(d.expression.expression) && d.expression.expression.text === 'Module');
    const options = decorator && ts.isCallExpression(decorator.expression) ? decorator.expression.arguments[0] : undefined;
    if (!options || !ts.isObjectLiteralExpression(options)) continue;
    const list = (name: string) => {
      const property = options.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(sf) === name);
      return property ? listedClasses(sf, property.initializer) : [];
    };
    out.set(statement.name.text, { members: [...list('controllers'), ...list('providers')], imports: list('imports') });
  }
  return out;
}

/**
 * The class names a module list spells out: an array literal, both branches of a condition, and arrays spread from a
 * const of the same file (gitroomhq/postiz-app: `controllers: process.env.MCP_ONLY ? [Root] : [Root, ...authenticatedController]`).
 */
function listedClasses(sf: ts.SourceFile, value: ts.Expression, depth = 0): string[] {
  if (depth > 3) return [];
  if (ts.isParenthesizedExpression(value) || ts.isAsExpression(value)) return listedClasses(sf, value.expression, depth);
  if (ts.isConditionalExpression(value)) return [...listedClasses(sf, value.whenTrue, depth + 1), ...listedClasses(sf, value.whenFalse, depth + 1)];
  if (ts.isIdentifier(value)) {
    const declared = sameFileConst(sf, value.text);
    return declared ? listedClasses(sf, declared, depth + 1) : [];
  }
  if (!ts.isArrayLiteralExpression(value)) return [];
  return value.elements.flatMap((e) => (ts.isSpreadElement(e) ? listedClasses(sf, e.expression, depth + 1) : (classNamed(e) ?? [])));
}

/** The initializer of a module-level `const name = …` of the file. */
function sameFileConst(sf: ts.SourceFile, name: string): ts.Expression | undefined {
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) return d.initializer;
  }
  return undefined;
}

/** `X`, `forwardRef(() => X)` or `{ provide: TOKEN, useClass: X }`; anything else (forRoot(), spreads) says nothing. */
function classNamed(element: ts.Expression): string | undefined {
  if (ts.isIdentifier(element)) return element.text;
  if (ts.isCallExpression(element) && ts.isIdentifier(element.expression) && element.expression.text === 'forwardRef') {
    const callback = element.arguments[0];
    return callback && ts.isArrowFunction(callback) && ts.isExpression(callback.body) ? classNamed(callback.body) : undefined;
  }
  if (ts.isObjectLiteralExpression(element)) {
    const useClass = element.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === 'useClass');
    return useClass && ts.isIdentifier(useClass.initializer) ? useClass.initializer.text : undefined;
  }
  return undefined;
}

/** The class around the 1-based line; the file's only class when the line is outside every class. */
function enclosingClass(sf: ts.SourceFile, line: number): string | undefined {
  const classes = sf.statements.filter((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name !== undefined);
  const around = classes.find((c) => {
    const start = sf.getLineAndCharacterOfPosition(c.getStart(sf)).line + 1;
    const end = sf.getLineAndCharacterOfPosition(c.getEnd()).line + 1;
    return start <= line && line <= end;
  });
  return (around ?? (classes.length === 1 ? classes[0] : undefined))?.name?.text;
}

interface Resolver {
  known: ReadonlySet<string>;
  aliases: readonly PathAlias[];
  sourceOf(file: string): Promise<ts.SourceFile | undefined>;
}

/** `file#Class` for a class name used in `file`: declared there, or imported (through barrels, three deep). */
async function resolveClass(file: string, name: string, resolver: Resolver, depth = 0): Promise<string | undefined> {
  const sf = await resolver.sourceOf(file);
  if (!sf || depth > 3) return undefined;
  if (sf.statements.some((s) => ts.isClassDeclaration(s) && s.name?.text === name)) return key(file, name);
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier)) continue;
    const imported = importedName(statement, name, depth > 0);
    if (imported === undefined) continue;
    const target = resolveSpecifier(file, specifier.text, resolver);
    const found = target ? await resolveClass(target, imported, resolver, depth + 1) : undefined;
    if (found) return found;
  }
  return undefined;
}

/**
 * The name `local` has in the module a declaration points at: `import { A as local }`, and, in a file reached through
 * an import (a barrel), `export { A as local } from` or `export * from`.
 */
export function importedName(statement: ts.ImportDeclaration | ts.ExportDeclaration, local: string, barrel: boolean): string | undefined {
  if (ts.isImportDeclaration(statement)) {
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) return undefined;
    const element = bindings.elements.find((e) => e.name.text === local);
    return element ? (element.propertyName?.text ?? element.name.text) : undefined;
  }
  if (!barrel) return undefined;
  if (!statement.exportClause) return local;
  if (!ts.isNamedExports(statement.exportClause)) return undefined;
  const element = statement.exportClause.elements.find((e) => e.name.text === local);
  return element ? (element.propertyName?.text ?? element.name.text) : undefined;
}

/** The project file a specifier names: relative, through a tsconfig alias, or from the root (a `baseUrl: "./"` import). */
export function resolveSpecifier(from: string, specifier: string, resolver: Pick<Resolver, 'known' | 'aliases'>): string | undefined {
  const alias = resolver.aliases.find((a) => specifier.startsWith(a.prefix));
  const base = specifier.startsWith('.')
    ? path.posix.join(path.posix.dirname(from), specifier)
    : alias
      ? path.posix.join(alias.dir, specifier.slice(alias.prefix.length))
      : specifier;
  const stem = base.replace(/\.(m|c)?js$/, '');
  return [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${stem}/index.ts`].find((candidate) => /\.(m|c)?ts$/.test(candidate) && resolver.known.has(candidate));
}
