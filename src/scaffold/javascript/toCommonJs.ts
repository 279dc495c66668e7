import type * as TsMorph from 'ts-morph';
import { DEFAULT_CLASS } from '../profile/defaultClass.js';
import { fileBesideModule } from './fileBesideModule.js';

type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** What one module specifier contributes: a default/namespace binding and destructured names (local → imported). */
interface Required {
  statement: Node;
  whole: string[];
  names: Map<string, string>;
}

/**
 * Rewrites the import/export syntax of one ES module (already free of types) into plain CommonJS: one
 * `const { a, b } = require('./x.js')` per module, `export` keywords dropped, and a `module.exports = { … }` at the
 * end. Written by hand rather than by TypeScript's CommonJS emit, whose `(0, core_js_1.isStorable)(…)` calls and
 * `exports.x = x` preamble would make files the user is meant to own hard to read. Node's CJS named-export
 * detection understands the object literal, so `import { createIdempotency } from './index.js'` also works.
 */
export function toCommonJs(ts: Ts, code: string, fileName: string, options: { strict: boolean } = { strict: true }): string {
  const file = ts.createSourceFile(fileName.replace(/\.ts$/, '.js'), code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const fail = (node: Node, what: string): never => {
    const { line } = file.getLineAndCharacterOfPosition(node.getStart());
    throw new Error(`bug: generated ${fileName}:${line + 1} uses ${what}, which has no CommonJS rewrite yet`);
  };
  const required = new Map<string, Required>();
  const exported = new Map<string, string>();
  const spreads: string[] = [];
  const edits: Edit[] = [];
  const locals = new Map<string, string>();

  const requireOf = (specifier: string, statement: Node): Required => {
    let entry = required.get(specifier);
    if (!entry) {
      entry = { statement, whole: [], names: new Map() };
      required.set(specifier, entry);
    } else edits.push(removal(file, statement));
    return entry;
  };
  const bind = (node: Node, local: string, source: string) => {
    const previous = locals.get(local);
    if (previous !== undefined && previous !== source) fail(node, `the name ${local} for two different bindings`);
    locals.set(local, source);
  };
  const addExport = (node: Node, name: string, local: string) => {
    if (exported.has(name) && exported.get(name) !== local) fail(node, `two exports named ${name}`);
    exported.set(name, local);
  };

  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const specifier = (statement.moduleSpecifier as TsMorph.ts.StringLiteral).text;
      const entry = requireOf(specifier, statement);
      const clause = statement.importClause;
      if (clause?.name) {
        bind(clause, clause.name.text, `${specifier}#`);
        entry.whole.push(clause.name.text);
      }
      const named = clause?.namedBindings;
      if (named && ts.isNamespaceImport(named)) {
        bind(named, named.name.text, `${specifier}#`);
        entry.whole.push(named.name.text);
      } else if (named) {
        for (const element of named.elements) {
          const imported = (element.propertyName ?? element.name).text;
          bind(element, element.name.text, `${specifier}#${imported}`);
          entry.names.set(element.name.text, imported);
        }
      }
    } else if (ts.isExportDeclaration(statement)) {
      const specifier = statement.moduleSpecifier && (statement.moduleSpecifier as TsMorph.ts.StringLiteral).text;
      const clause = statement.exportClause;
      if (specifier === undefined) {
        if (!clause || !ts.isNamedExports(clause)) fail(statement, 'an export list it cannot read');
        for (const element of (clause as TsMorph.ts.NamedExports).elements) addExport(element, element.name.text, (element.propertyName ?? element.name).text);
        edits.push(removal(file, statement));
      } else if (!clause) {
        spreads.push(`...require(${quote(specifier)})`);
        edits.push(removal(file, statement));
      } else if (ts.isNamedExports(clause)) {
        const entry = requireOf(specifier, statement);
        for (const element of clause.elements) {
          const imported = (element.propertyName ?? element.name).text;
          bind(element, imported, `${specifier}#${imported}`);
          entry.names.set(imported, imported);
          addExport(element, element.name.text, imported);
        }
      } else fail(statement, 'export * as');
    } else if (ts.isExportAssignment(statement)) {
      fail(statement, 'export default');
    } else {
      const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
      const keyword = modifiers.find((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
      if (!keyword) continue;
      if (modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword)) fail(statement, 'export default');
      edits.push({ start: keyword.getStart(), end: keyword.end + (code[keyword.end] === ' ' ? 1 : 0), text: '' });
      for (const name of declaredNames(ts, statement)) addExport(statement, name, name);
      if (declaredNames(ts, statement).length === 0) fail(statement, 'an exported declaration without a plain name');
    }
  }
  edits.push(...importMetaEdits(ts, file, fail), ...dynamicImportEdits(ts, file));

  for (const [specifier, entry] of required) edits.push({ start: entry.statement.getStart(), end: entry.statement.end, text: requireText(specifier, entry) });
  const entries = [...spreads, ...[...exported].map(([name, local]) => (name === local ? name : `${name}: ${local}`))];
  let out = applyEdits(code, edits);
  if (entries.length > 0) out = `${out.trimEnd()}\n\nmodule.exports = { ${entries.join(', ')} };\n`;
  if (!options.strict) return out;
  // ES modules are strict; the same code as CommonJS says so itself, below the file's opening line comments.
  const header = /^(?:\/\/.*\n)*/.exec(out)?.[0] ?? '';
  return `${header}'use strict';\n\n${out.slice(header.length)}`;
}

function requireText(specifier: string, entry: Required): string {
  const call = `require(${quote(specifier)})`;
  // The class that every release exports as the default (ioredis 5.0 has no `Redis` property).
  const main = DEFAULT_CLASS[specifier];
  const whole = [...entry.whole];
  const isMain = (imported: string) => main !== undefined && (imported === main || imported === 'default');
  // Read through `default`, which every release sets (the typings too, so checkJs sees the class, not the module).
  const named = [...entry.names].map(([local, imported]): [string, string] => [local, isMain(imported) ? 'default' : imported]);
  const lines = whole.map((name) => `const ${name} = ${call};`);
  if (named.length > 0) {
    const names = named.map(([local, imported]) => (local === imported ? local : `${imported}: ${local}`));
    lines.push(`const { ${names.join(', ')} } = ${call};`);
  }
  return lines.length > 0 ? lines.join('\n') : `${call};`;
}

function declaredNames(ts: Ts, statement: Node): string[] {
  if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) return [statement.name.text];
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((declaration) => (ts.isIdentifier(declaration.name) ? [declaration.name.text] : []));
  }
  return [];
}

/**
 * import.meta has no CommonJS meaning: a file named beside the module (`new URL('./x', import.meta.url)`) becomes a
 * path under __dirname; any other use needs a rewrite here first (e.g. `require.main === module`).
 */
function importMetaEdits(ts: Ts, file: TsMorph.ts.SourceFile, fail: (node: Node, what: string) => never): Edit[] {
  const edits: Edit[] = [];
  const visit = (node: Node): void => {
    const beside = fileBesideModule(ts, node);
    if (beside !== undefined) {
      edits.push({ start: node.getStart(), end: node.end, text: beside });
      return;
    }
    if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) fail(node, 'import.meta');
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edits;
}

/**
 * `await import('./x.js')` (a suite loading a module where it needs it) is `require('./x.js')` in CommonJS: the
 * same module object, and no dynamic import, which Jest before 27 cannot run in CommonJS without
 * --experimental-vm-modules (hagopj13/node-express-boilerplate's suite failed on it).
 */
function dynamicImportEdits(ts: Ts, file: TsMorph.ts.SourceFile): Edit[] {
  const edits: Edit[] = [];
  const visit = (node: Node): void => {
    if (ts.isAwaitExpression(node) && ts.isCallExpression(node.expression) && node.expression.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.expression.arguments;
      if (argument && ts.isStringLiteral(argument) && node.expression.arguments.length === 1) {
        edits.push({ start: node.getStart(), end: node.end, text: `require(${quote(argument.text)})` });
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edits;
}

/** The statement and the line break after it, so no empty line is left where it stood. */
function removal(file: TsMorph.ts.SourceFile, statement: Node): Edit {
  const text = file.text;
  let end = statement.end;
  while (text[end] === ' ' || text[end] === '\t') end += 1;
  if (text[end] === '\n') end += 1;
  return { start: statement.getStart(), end, text: '' };
}

function applyEdits(code: string, edits: Edit[]): string {
  let out = code;
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * For an ES module test suite in a CommonJS project: the project's own files (relative specifiers, static or
 * dynamic) are loaded with require(), as the application loads them. Importing them instead would give the suite a
 * second copy of each module beside the one they require() from each other, and `instanceof` would fail across them.
 */
export function requireRelativeImports(ts: Ts, code: string, fileName: string): string {
  const file = ts.createSourceFile(fileName.replace(/\.ts$/, '.js'), code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const relative = file.statements.filter(
    (statement): statement is TsMorph.ts.ImportDeclaration =>
      ts.isImportDeclaration(statement) && (statement.moduleSpecifier as TsMorph.ts.StringLiteral).text.startsWith('.'),
  );
  const last = relative.at(-1);
  if (!last) return code;
  const requires = relative.map((statement) => {
    const entry: Required = { statement, whole: [], names: new Map() };
    const clause = statement.importClause;
    if (clause?.name) entry.whole.push(clause.name.text);
    const named = clause?.namedBindings;
    if (named && ts.isNamespaceImport(named)) entry.whole.push(named.name.text);
    else if (named) for (const element of named.elements) entry.names.set(element.name.text, (element.propertyName ?? element.name).text);
    return requireText((statement.moduleSpecifier as TsMorph.ts.StringLiteral).text, entry);
  });
  const edits: Edit[] = relative.filter((statement) => statement !== last).map((statement) => removal(file, statement));
  edits.push({
    start: last.getStart(),
    end: last.end,
    text: `import { createRequire } from 'node:module';\n\nconst require = createRequire(import.meta.url);\n${requires.join('\n')}`,
  });
  // `await import('./x.js')` inside a test: the same module, so the same require().
  const visit = (node: Node): void => {
    const call = ts.isAwaitExpression(node) ? node.expression : node;
    if (ts.isCallExpression(call) && call.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = call.arguments;
      if (argument && ts.isStringLiteral(argument) && argument.text.startsWith('.')) {
        edits.push({ start: node.getStart(), end: node.end, text: `require(${quote(argument.text)})` });
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return applyEdits(code, edits);
}
