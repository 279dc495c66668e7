import type * as TsMorph from 'ts-morph';
import { fileBesideModule } from '../javascript/fileBesideModule.js';
import { loadTypeScript } from '../javascript/transpile.js';
import { quote } from '../tsLiteral.js';
import type { ScaffoldFile } from '../types.js';
import { toBareBuiltins } from './bareBuiltins.js';
import { DEFAULT_CLASS } from './defaultClass.js';
import { precompiledProfileJavaScript } from '../javascript/precompiled.js';
import { toBabel6Syntax } from './babel6Syntax.js';
import { bareBuiltinsInJavaScript, oldJestJavaScript } from './javascriptProfile.js';
import { withSandboxEncoding } from './jestEncoding.js';
import { bindSandboxGlobals, pinJestEnvironment } from './jestSandbox.js';
import type { ProjectProfile } from './types.js';

type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Adapts the targets' TypeScript (written for Node ESM: `./x.js` specifiers, default imports of CommonJS packages)
 * to the project's profile: extensionless relative imports for bundler/CommonJS resolution, and `import x =
 * require('m')` where a default import would read `m_1.default` (CommonJS without esModuleInterop). Runs after the
 * targets (and after toJavaScriptFiles for JavaScript, which needs none of this), so templates stay one source.
 * Either language gets bare builtin specifiers when the project's Jest needs them (bareBuiltins.ts).
 */
export function applyProfile(files: readonly ScaffoldFile[], profile: ProjectProfile): ScaffoldFile[] {
  const named = profile.testFileSuffix === 'spec' ? files.map(toSpecName) : files;
  let adapted = profile.language === 'typescript' ? adaptTypeScript(named, profile) : [...named];
  // JavaScript printed in the house style is read without the compiler (javascriptProfile.ts); files transpiled at
  // run time have loaded it already.
  const direct = new Set(profile.language === 'javascript' ? named.filter((file) => file.formatted && /\.[cm]?js$/.test(file.path)).map((file) => file.path) : []);
  if (direct.size > 0 && (profile.jestSandbox || profile.bareBuiltins)) adapted = withOldJestJavaScript(adapted, profile, direct);
  if (profile.jestSandbox) adapted = withSandboxGlobals(adapted, profile, direct);
  if (profile.bareBuiltins) adapted = withBareBuiltins(adapted, direct, profile.language === 'javascript');
  if (profile.language === 'typescript') adapted = withoutOrphanTypes(named, adapted);
  if (profile.testRunner === 'jest' && profile.jestGlobals) adapted = adapted.map(withJestGlobals);
  if (profile.testRunner === 'jest' && profile.jestEncoding) {
    adapted = withSandboxEncoding(loadTypeScript(), adapted, profile, profile.language === 'javascript' && profile.moduleSystem === 'commonjs' ? 'require' : 'import');
  }
  if (profile.testRunner === 'jest') adapted = adapted.map(withJestEnvironment);
  return profile.language === 'javascript' && profile.jestBabel6 ? toBabel6Syntax(adapted) : adapted;
}

/**
 * A type the adaptations left unused: `satisfies Record<string, ActionSettings>` stripped for TypeScript before 4.9
 * leaves `ActionSettings` imported for nothing, and an old Jest's sandbox binding replaces the reads typed by
 * `SuiteFetch` / `PushFetch`. A project with `noUnusedLocals` refuses those, so each goes with its last use: a type
 * alias or interface of the file, or a name of a type-only import.
 */
function withoutOrphanTypes(before: readonly ScaffoldFile[], after: readonly ScaffoldFile[]): ScaffoldFile[] {
  const original = new Map(before.map((file) => [file.path, file.contents]));
  return after.map((file) => {
    const was = original.get(file.path);
    if (was === undefined || was === file.contents || !/\.[cm]?ts$/.test(file.path) || file.path.endsWith('.d.ts')) return file;
    const contents = dropOrphanTypes(was, file.contents);
    return contents === file.contents ? file : { ...file, contents };
  });
}

export function dropOrphanTypes(was: string, code: string): string {
  const ts = loadTypeScript();
  const file = ts.createSourceFile('module.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const uses = new Map<string, number>();
  const declarations = new Set<Node>();
  const edits: Edit[] = [];
  const candidates: Array<{ name: string; node: Node; remove: () => Edit }> = [];
  for (const statement of file.statements) {
    const exported = (statement as { modifiers?: readonly Node[] }).modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true;
    if ((ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) && !exported) {
      declarations.add(statement.name);
      candidates.push({ name: statement.name.text, node: statement, remove: () => ({ start: statement.getFullStart(), end: statement.end, text: '' }) });
    }
    if (!ts.isImportDeclaration(statement) || !statement.importClause) continue;
    const clause = statement.importClause;
    const named = clause.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings : undefined;
    if (!named || clause.name) continue;
    for (const element of named.elements) {
      if (!clause.isTypeOnly && !element.isTypeOnly) continue;
      declarations.add(element.name);
      candidates.push({
        name: element.name.text,
        node: element,
        remove: () => {
          const kept = named.elements.filter((other) => other !== element && !edits.some((edit) => edit.start <= other.getStart() && other.end <= edit.end));
          if (kept.length === 0) return { start: statement.getFullStart(), end: statement.end, text: '' };
          const index = named.elements.indexOf(element);
          // The element and the comma after it (or, for the last one, the comma before it).
          return index < named.elements.length - 1
            ? { start: element.getStart(), end: named.elements[index + 1]!.getStart(), text: '' }
            : { start: named.elements[index - 1]!.end, end: element.end, text: '' };
        },
      });
    }
  }
  if (candidates.length === 0) return code;
  const count = (node: Node): void => {
    if (ts.isIdentifier(node) && !declarations.has(node)) uses.set(node.text, (uses.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, count);
  };
  count(file);
  const usedBefore = (name: string) => (was.match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0) > 1;
  for (const candidate of candidates) {
    if ((uses.get(candidate.name) ?? 0) > 0 || !usedBefore(candidate.name)) continue;
    edits.push(candidate.remove());
  }
  // Two names of one import both gone: the second edit covers the whole statement, the first lies inside it.
  const outer = edits.filter((edit) => !edits.some((other) => other !== edit && other.start <= edit.start && edit.end <= other.end && (other.start < edit.start || edit.end < other.end)));
  let out = code;
  for (const edit of outer.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/**
 * Jest before 25.5 has no @jest/globals to import from: the same names are its globals (typed by @types/jest), and
 * the suites' `jestApi` alias is the global `jest` (the alias only exists because Jest 26's CommonJS wrapper has a
 * `jest` parameter that a `const { jest }` would redeclare; an unaliased global read has no such clash).
 */
export function withJestGlobals(file: ScaffoldFile): ScaffoldFile {
  const imports = /^(?:import \{[^}]*\} from '@jest\/globals';|const \{[^}]*\} = require\('@jest\/globals'\);)\n/m;
  if (!imports.test(file.contents)) return file;
  return { ...file, contents: file.contents.replace(imports, '').replace(/\bjestApi\./g, 'jest.') };
}

/** A Jest suite says which environment it needs (jestSandbox.ts): Node's, whatever the project's default is. */
function withJestEnvironment(file: ScaffoldFile): ScaffoldFile {
  if (file.role !== 'tests' || !/\.(test|spec)\.[cm]?[jt]s$/.test(file.path)) return file;
  const contents = pinJestEnvironment(file.contents);
  return contents === file.contents ? file : { ...file, contents };
}

/**
 * An old Jest's edits on the JavaScript printed in the house style, read without the compiler; a file this cannot
 * read leaves `direct` and goes the compiler's way below.
 */
function withOldJestJavaScript(files: readonly ScaffoldFile[], profile: ProjectProfile, direct: Set<string>): ScaffoldFile[] {
  const traits = { sandbox: profile.jestSandbox === true, bare: profile.bareBuiltins === true, style: profile.moduleSystem === 'commonjs' ? ('require' as const) : ('import' as const) };
  return files.map((file) => {
    if (!direct.has(file.path)) return file;
    const edit = oldJestJavaScript(file.contents, traits, precompiledProfileJavaScript);
    if (!edit) {
      direct.delete(file.path);
      return file;
    }
    return edit.code === file.contents ? file : { ...file, contents: edit.code, formatted: file.formatted && edit.keepsLayout };
  });
}

/** Node's globals bound explicitly in every source file that uses one the project's old Jest leaves out. */
function withSandboxGlobals(files: readonly ScaffoldFile[], profile: ProjectProfile, direct: ReadonlySet<string>): ScaffoldFile[] {
  const style = profile.language === 'javascript' && profile.moduleSystem === 'commonjs' ? 'require' : 'import';
  return files.map((file) => {
    if (!/\.[cm]?[jt]s$/.test(file.path) || file.path.endsWith('.d.ts')) return file;
    if (direct.has(file.path)) return file;
    const contents = bindSandboxGlobals(loadTypeScript(), file.contents, file.path, style);
    return contents === file.contents ? file : { ...file, contents, formatted: false };
  });
}

/** Bare builtin specifiers in every source file, TypeScript or JavaScript, and in the README's examples. */
function withBareBuiltins(files: readonly ScaffoldFile[], direct: ReadonlySet<string>, javascript: boolean): ScaffoldFile[] {
  return files.map((file) => {
    if (/\.[cm]?[jt]s$/.test(file.path)) {
      if (direct.has(file.path)) return file;
      const contents = file.contents.includes('node:') ? toBareBuiltins(loadTypeScript(), file.contents, file.path) : file.contents;
      return contents === file.contents ? file : { ...file, contents, formatted: false };
    }
    if (file.role === 'readme' || file.path.endsWith('.md')) {
      // Code blocks are not formatted (embedded code is left as written): only the text must be the compiler's.
      const bare = (language: string, code: string) => (javascript && language === 'js' ? bareBuiltinsInJavaScript(code)?.code : undefined) ?? (code.includes('node:') ? toBareBuiltins(loadTypeScript(), code, `README.${language}`) : code);
      const contents = file.contents.replace(/```(ts|js)\n([\s\S]*?)```/g, (_block, language: string, code: string) => `\`\`\`${language}\n${bare(language, code)}\`\`\``);
      return contents === file.contents ? file : { ...file, contents };
    }
    return file;
  });
}

function adaptTypeScript(files: readonly ScaffoldFile[], profile: ProjectProfile): ScaffoldFile[] {
  return files.map((file) => {
    if (file.path.endsWith('.ts')) {
      const contents = adaptSource(file.contents, profile, file.path);
      return contents === file.contents ? file : { ...file, contents, formatted: false };
    }
    if (file.role === 'readme') {
      const contents = file.contents.replace(/```ts\n([\s\S]*?)```/g, (_block, code: string) => `\`\`\`ts\n${adaptSource(aliasScaffoldImport(code, profile), profile, 'README.ts')}\`\`\``);
      return contents === file.contents ? file : { ...file, contents };
    }
    return file;
  });
}

/** `idempotency.test.ts` → `idempotency.spec.ts` (or .js), in the file's path and wherever the scaffold names a suite. */
function toSpecName(file: ScaffoldFile): ScaffoldFile {
  const rename = (text: string) => text.replace(/\b([\w-]+)\.test\.([cm]?[jt]s)\b/g, '$1.spec.$2');
  const contents = /\.[cm]?[jt]s$/.test(file.path) || file.role === 'readme' || file.path.endsWith('.md') ? rename(file.contents) : file.contents;
  const renamed = rename(file.path);
  return renamed === file.path && contents === file.contents ? file : { ...file, path: renamed, contents };
}

/**
 * The README's wiring example imports the scaffold as `./idempotency/index.js` (from a file beside it); a project
 * with a path alias over the folder imports it the way its own files do (`@/idempotency`), from anywhere.
 */
function aliasScaffoldImport(code: string, profile: ProjectProfile): string {
  if (profile.scaffoldImport === undefined) return code;
  return code.replace(/(from\s+)'\.\/idempotency\/index\.js'/g, (_match, from: string) => `${from}${quote(profile.scaffoldImport!)}`);
}

/** One TypeScript source adapted to the profile; unchanged for the reference profile (Node ESM with interop). */
export function adaptSource(code: string, profile: ProjectProfile, fileName = 'module.ts'): string {
  // The templates are written for this profile: nothing to adapt, and no compiler to load (cold-start cost, #20).
  const reference = profile.moduleSystem === 'esm' && profile.relativeImports === 'js-extension' && profile.defaultImportInterop && profile.typescriptVersion === undefined;
  if (reference) return code;
  const ts = loadTypeScript();
  const file = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edits: Edit[] = [];
  const specifier = (literal: TsMorph.ts.StringLiteral) => {
    if (profile.relativeImports === 'extensionless' && /^\.\.?\//.test(literal.text) && literal.text.endsWith('.js')) {
      edits.push({ start: literal.getStart() + 1, end: literal.end - 1, text: literal.text.slice(0, -3) });
    }
  };
  const oldSyntax = profile.typescriptVersion;
  for (const statement of file.statements) {
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      // TypeScript before 4.5 cannot parse `{ a, type B }`: the type-only names move to an `import type` of their own
      // (that rewrite also writes the specifier, so no other edit may touch the statement).
      const inline = oldSyntax !== undefined && oldSyntax < 405 ? inlineTypeEdit(ts, statement, profile) : undefined;
      if (inline) {
        edits.push(inline);
        continue;
      }
      specifier(statement.moduleSpecifier);
      if (ts.isImportDeclaration(statement) && profile.defaultImportInterop && !(profile.moduleSystem === 'esm' && profile.relativeImports === 'js-extension')) {
        const edit = defaultClassEdit(ts, statement);
        if (edit) edits.push(edit);
      }
      if (ts.isImportDeclaration(statement) && !profile.defaultImportInterop) {
        const edit = defaultImportEdit(ts, statement, profile);
        if (edit) edits.push(edit);
      }
    }
  }
  const visit = (node: Node): void => {
    // `x satisfies T` (4.9) becomes `x`: the same value, without the check older compilers cannot make.
    if (oldSyntax !== undefined && oldSyntax < 409 && ts.isSatisfiesExpression(node)) {
      edits.push({ start: node.expression.end, end: node.end, text: '' });
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) specifier(argument);
    }
    const beside = profile.moduleSystem === 'commonjs' ? fileBesideModule(ts, node) : undefined;
    if (beside !== undefined) {
      edits.push({ start: node.getStart(), end: node.end, text: beside });
      return;
    }
    if (profile.moduleSystem === 'commonjs' && ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart());
      throw new Error(`bug: generated ${fileName}:${line + 1} uses import.meta, which a CommonJS project cannot compile`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  let out = code;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/**
 * `import pg from 'pg'` without interop: `import pg = require('pg')` in CommonJS output (the binding is the module
 * itself, as `require` returns it), `import * as pg from 'pg'` in ES module output. Named imports beside the default
 * move to their own statement.
 */
function defaultImportEdit(ts: Ts, statement: TsMorph.ts.ImportDeclaration, profile: ProjectProfile): Edit | undefined {
  const clause = statement.importClause;
  const moduleName = (statement.moduleSpecifier as TsMorph.ts.StringLiteral).text;
  if (!clause?.name || clause.isTypeOnly || /^\.\.?\//.test(moduleName) || moduleName.startsWith('node:')) return undefined;
  const quoted = statement.moduleSpecifier.getText();
  const local = clause.name.text;
  const lines = [profile.moduleSystem === 'commonjs' ? `import ${local} = require(${quoted});` : `import * as ${local} from ${quoted};`];
  if (clause.namedBindings) lines.push(`import ${clause.namedBindings.getText()} from ${quoted};`);
  return { start: statement.getStart(), end: statement.end, text: lines.join('\n') };
}

/**
 * `import IORedis from 'ioredis'` (a DEFAULT_CLASS package, whose class the templates read as `IORedis.default`)
 * becomes `import * as IORedis` outside Node's ES module loader: there the default import types as the class
 * itself, while the namespace types as the module, as the default import does under node16/nodenext resolution, and
 * its `default` is the class at run time too (the module is flagged __esModule, so no interop wrapper is added).
 * Without interop defaultImportEdit makes the same change.
 */
function defaultClassEdit(ts: Ts, statement: TsMorph.ts.ImportDeclaration): Edit | undefined {
  const clause = statement.importClause;
  if (DEFAULT_CLASS[(statement.moduleSpecifier as TsMorph.ts.StringLiteral).text] === undefined) return undefined;
  if (!clause?.name || clause.isTypeOnly || clause.namedBindings) return undefined;
  return { start: clause.name.getStart(), end: clause.name.end, text: `* as ${clause.name.text}` };
}

/** `import { a, type B } from 'm'` → `import type { B } from 'm';` + `import { a } from 'm';` (same for export). */
function inlineTypeEdit(ts: Ts, statement: TsMorph.ts.ImportDeclaration | TsMorph.ts.ExportDeclaration, profile: ProjectProfile): Edit | undefined {
  const named = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
  if (!named || !(ts.isNamedImports(named) || ts.isNamedExports(named))) return undefined;
  const elements: readonly (TsMorph.ts.ImportSpecifier | TsMorph.ts.ExportSpecifier)[] = named.elements;
  const typed = elements.filter((element) => element.isTypeOnly);
  if (typed.length === 0) return undefined;
  const values = elements.filter((element) => !element.isTypeOnly);
  const text = (element: TsMorph.ts.ImportSpecifier | TsMorph.ts.ExportSpecifier) => element.getText().replace(/^type\s+/, '');
  let specifierText = statement.moduleSpecifier!.getText();
  if (profile.relativeImports === 'extensionless' && /^['"]\.\.?\//.test(specifierText)) specifierText = specifierText.replace(/\.js(['"])$/, '$1');
  const keyword = ts.isImportDeclaration(statement) ? 'import' : 'export';
  const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
  const lines = [`${keyword} type { ${typed.map(text).join(', ')} } from ${specifierText};`];
  let defaultName = clause?.name?.getText();
  const bare = !/^['"](\.|node:)/.test(specifierText);
  if (defaultName && bare && !profile.defaultImportInterop) {
    lines.push(profile.moduleSystem === 'commonjs' ? `import ${defaultName} = require(${specifierText});` : `import * as ${defaultName} from ${specifierText};`);
    defaultName = undefined;
  }
  if (values.length > 0 || defaultName) {
    const parts = [defaultName, values.length > 0 ? `{ ${values.map(text).join(', ')} }` : undefined].filter(Boolean).join(', ');
    lines.push(`${keyword} ${parts} from ${specifierText};`);
  }
  return { start: statement.getStart(), end: statement.end, text: lines.join('\n') };
}
