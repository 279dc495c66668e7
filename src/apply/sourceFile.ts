import { IndentationText, Node, Project, QuoteKind, SyntaxKind, type CallExpression, type ImportDeclaration, type ObjectBindingPattern, type ObjectLiteralExpression, type SourceFile, type ts } from 'ts-morph';
import { builtinModules } from 'node:module';
import type { ImportStyle } from './types.js';

/** The file's own indentation (two or four spaces, or tabs), so inserted code matches what is around it. */
function indentationOf(text: string): IndentationText {
  if (/^\t/m.test(text)) return IndentationText.Tab;
  return /^ {4}\S/m.test(text) && !/^ {2}\S/m.test(text) ? IndentationText.FourSpaces : IndentationText.TwoSpaces;
}

/** A throwaway in-memory project holding one file: transforms are pure text → text, no disk, no type checker. */
export function parseSource(file: string, text: string, style: Pick<ImportStyle, 'quote' | 'semicolons'>): SourceFile {
  const project = new Project({
    useInMemoryFileSystem: true,
    skipAddingFilesFromTsConfig: true,
    manipulationSettings: { quoteKind: style.quote === 'double' ? QuoteKind.Double : QuoteKind.Single, indentationText: indentationOf(text) },
  });
  const sf = project.createSourceFile(`/${file}`, text, { overwrite: true });
  if (!style.semicolons) noSemicolons.add(sf);
  if (isCommonJs(file, text)) commonJs.add(sf);
  return sf;
}

/**
 * The ts-morph node for a compiler node: the node under `scope` with its start, end and kind. The compiler node may
 * come from another parse of the same text (the findings engine parses files its own way), so it is found by its
 * place, never by identity; `test` narrows the type.
 */
export function morphNode<T extends Node = Node>(scope: Node, node: ts.Node, test?: (n: Node) => n is T): T | undefined {
  const start = node.getStart(node.getSourceFile());
  const end = node.getEnd();
  const kind = node.kind as SyntaxKind;
  return scope.getDescendants().find((n): n is T => n.getKind() === kind && n.getStart() === start && n.getEnd() === end && (test === undefined || test(n)));
}

/** A .cjs file, or a .js file that require()s and neither imports nor exports as an ES module. */
export function isCommonJs(file: string, text: string): boolean {
  if (file.endsWith('.cjs')) return true;
  return /\.js$/.test(file) && /\brequire\s*\(/.test(text) && !/^\s*(import|export)\s/m.test(text);
}

/** Files that load modules with require(): apply's imports are `const { name } = require('…')` there. */
const commonJs = new WeakSet<SourceFile>();

/** Top-level `const { a, b } = require('spec')` statements of the file, with their destructuring pattern. */
function requireStatements(sf: SourceFile) {
  return sf.getVariableStatements().flatMap((statement) =>
    statement.getDeclarations().flatMap((d) => {
      const init = d.getInitializer();
      const match = init && /^require\(\s*(['"])([^'"]+)\1\s*\)$/.exec(init.getText());
      return match ? [{ statement, declaration: d, specifier: match[2]! }] : [];
    }),
  );
}

function ensureRequire(sf: SourceFile, specifier: string, name: string): boolean {
  const requires = requireStatements(sf);
  for (const r of requires.filter((r) => r.specifier === specifier)) {
    const pattern = r.declaration.getNameNode();
    if (Node.isObjectBindingPattern(pattern) && pattern.getElements().some((e) => e.getName() === name)) return true;
  }
  if (bindsName(sf, name) || requires.some((r) => Node.isObjectBindingPattern(r.declaration.getNameNode()) && (r.declaration.getNameNode() as ObjectBindingPattern).getElements().some((e) => e.getName() === name))) return false;
  const target = requires.find((r) => r.specifier === specifier && Node.isObjectBindingPattern(r.declaration.getNameNode()));
  if (target) {
    const pattern = target.declaration.getNameNode() as ObjectBindingPattern;
    const names = [...pattern.getElements().map((e) => e.getText()), name];
    pattern.replaceWithText(`{ ${names.join(', ')} }`);
    return true;
  }
  const quote = sf.getProject().manipulationSettings.getQuoteKind() === QuoteKind.Double ? '"' : "'";
  const last = requires[requires.length - 1]?.statement;
  const index = last ? last.getChildIndex() + 1 : 0;
  sf.insertStatements(index, fitStatement(sf, `const { ${name} } = require(${quote}${specifier}${quote});`));
  return true;
}

/** Files written without semicolons: statements apply inserts drop theirs (see `fitStatement`). */
const noSemicolons = new WeakSet<SourceFile>();

/** An inserted statement in the file's semicolon style. */
export function fitStatement(sf: SourceFile, statement: string): string {
  return noSemicolons.has(sf) ? statement.replace(/;\s*$/, '') : statement;
}

/**
 * Makes `name` available from `specifier`: reuses an import of that module, or adds one after the last import.
 * Returns false (and changes nothing) when the file already binds `name` to something else: apply must not shadow it.
 */
export function ensureNamedImport(sf: SourceFile, specifier: string, name: string): boolean {
  if (commonJs.has(sf)) return ensureRequire(sf, specifier, name);
  const fromModule = sf.getImportDeclarations().filter((d) => d.getModuleSpecifierValue() === specifier && !d.isTypeOnly());
  for (const declaration of fromModule) {
    if (declaration.getNamedImports().some((n) => (n.getAliasNode()?.getText() ?? n.getName()) === name)) return true;
  }
  if (bindsName(sf, name)) return false;
  const target = fromModule.find((d) => d.getNamespaceImport() === undefined);
  if (target) {
    target.addNamedImport(name);
    return true;
  }
  const imports = sf.getImportDeclarations();
  // With no imports yet, after the 'use client' / 'use server' directives, which must stay first.
  const directives = sf.getStatements().findIndex((st) => !(Node.isExpressionStatement(st) && Node.isStringLiteral(st.getExpression())));
  const index = imports.length === 0 ? Math.max(0, directives === -1 ? sf.getStatements().length : directives) : importSlot(imports, specifier);
  const added = sf.insertImportDeclaration(index, { moduleSpecifier: specifier, namedImports: [name] });
  if (noSemicolons.has(sf)) added.replaceWithText(fitStatement(sf, added.getText()));
  return true;
}

/** Node's own modules, then packages, then the project's files (relative or through an alias such as `@/`, `~/`, `#`). */
function importGroup(specifier: string): number {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return 0;
  return /^(\.|@\/|~\/|#)/.test(specifier) ? 2 : 1;
}

/**
 * Where a new import goes: after the last import of its group or an earlier one (`node:crypto` joins the other
 * `node:` imports rather than trailing the project's own), else before the first import.
 */
function importSlot(imports: readonly ImportDeclaration[], specifier: string): number {
  const group = importGroup(specifier);
  const before = imports.filter((d) => importGroup(d.getModuleSpecifierValue()) <= group);
  return before.length > 0 ? before[before.length - 1]!.getChildIndex() + 1 : imports[0]!.getChildIndex();
}

/** Whether a top-level import or declaration already uses the name. */
export function bindsName(sf: SourceFile, name: string): boolean {
  for (const d of sf.getImportDeclarations()) {
    if (d.getDefaultImport()?.getText() === name || d.getNamespaceImport()?.getText() === name) return true;
    if (d.getNamedImports().some((n) => (n.getAliasNode()?.getText() ?? n.getName()) === name)) return true;
  }
  for (const statement of sf.getStatements()) {
    if (statement.getKindName() === 'ImportEqualsDeclaration' && statement.getText().match(/^import\s+(\w+)/)?.[1] === name) return true;
  }
  return sf.getVariableDeclaration(name) !== undefined || sf.getFunction(name) !== undefined || sf.getClass(name) !== undefined;
}

/**
 * `{ a }` → `{ ...expr, a }`, first so the object's own properties still win. A one-line literal stays on one line
 * (ts-morph would break it over three); a multi-line one gets the spread as its first line.
 */
export function spreadFirst(object: ObjectLiteralExpression, expression: string): void {
  if (object.getStartLineNumber() !== object.getEndLineNumber()) {
    object.insertSpreadAssignment(0, { expression });
    return;
  }
  const inner = object.getText().slice(1, -1).trim();
  object.replaceWithText(inner === '' ? `{ ...${expression} }` : `{ ...${expression}, ${inner} }`);
}

/**
 * `{ a }` → `{ a, b: c }`: `property` (source text) last. A one-line literal stays on one line (ts-morph would break
 * it over three); a multi-line one gets the property as its last line, with a trailing comma when the others have one.
 */
export function appendProperty(object: ObjectLiteralExpression, property: string): void {
  const last = object.getProperties().at(-1);
  if (object.getStartLineNumber() !== object.getEndLineNumber()) {
    // A template literal over several lines would change with the re-indentation below: ts-morph places it instead.
    const multiLineTemplate = [...object.getDescendantsOfKind(SyntaxKind.TemplateExpression), ...object.getDescendantsOfKind(SyntaxKind.NoSubstitutionTemplateLiteral)].some((t) => t.getStartLineNumber() !== t.getEndLineNumber());
    if (!last || multiLineTemplate) {
      object.addProperty(property);
      return;
    }
    // On its own line at the last property's indentation, keeping the literal's trailing comma if it has one.
    const text = object.getText();
    const end = last.getEnd() - object.getStart();
    const rest = text.slice(end);
    const trailing = rest.startsWith(',');
    const edited = `${text.slice(0, end)},\n${last.getIndentationText()}${property}${trailing ? ',' : ''}${trailing ? rest.slice(1) : rest}`;
    // replaceWithText indents every line after the first by the literal's own line: hand it the lines without that.
    const indent = object.getIndentationText();
    object.replaceWithText(edited.split('\n').map((line, i) => (i > 0 && line.startsWith(indent) ? line.slice(indent.length) : line)).join('\n'));
    return;
  }
  const inner = object.getText().slice(1, -1).trim().replace(/,$/, '');
  object.replaceWithText(inner === '' ? `{ ${property} }` : `{ ${inner}, ${property} }`);
}

/**
 * Inserts `text` as the argument at `index`, following the call's layout: when the arguments sit one per line the
 * new one gets its own line (ts-morph would append it to the previous line). The multi-line case edits the text
 * directly, which forgets every wrapped node of the file: callers find the call again afterwards.
 */
export function insertArgumentAt(sf: SourceFile, call: CallExpression, index: number, text: string): void {
  const args = call.getArguments();
  const next = args[index];
  const previous = args[index - 1];
  if (next && previous && previous.getEndLineNumber() !== next.getStartLineNumber()) {
    sf.insertText(next.getStart(), `${text},\n${next.getIndentationText()}`);
    return;
  }
  call.insertArgument(index, text);
}
