import type * as TsMorph from 'ts-morph';

// TypeScript is passed in (applyProfile loads it): readProjectProfile imports this file and must not load it.
type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;

/**
 * Jest runs each suite in a vm context whose global object it fills itself. Before 28 it copied only a short list
 * of Node's globals: Jest 26 has no AbortController, AbortSignal, performance or fetch there (even on Node 20),
 * Jest 27 still no fetch, Headers, Response, structuredClone or crypto. `jestVersion` is major * 100 + minor.
 */
export function needsSandboxGlobals(jestVersion: number | undefined): boolean {
  return jestVersion !== undefined && jestVersion < 2800;
}

/**
 * Jest before 24.3 gives its Node environment no TextEncoder or TextDecoder (on any Node), and pg reads TextEncoder
 * as it loads (since pg 8.11): every suite then fails with "TextEncoder is not defined" before a test runs, unless it
 * imports jest-sandbox first (jestEncoding.ts). `jestVersion` is major * 100 + minor; undefined = no Jest.
 */
export function needsSandboxEncoding(jestVersion: number | undefined): boolean {
  return jestVersion !== undefined && jestVersion < 2403;
}

/** Node globals the generated code may use that some Jest before 28 leaves out of its sandbox. */
export const SANDBOX_GAPS: ReadonlySet<string> = new Set([
  'AbortController',
  'AbortSignal',
  'Blob',
  'BroadcastChannel',
  'Event',
  'EventTarget',
  'FormData',
  'Headers',
  'MessageChannel',
  'Request',
  'Response',
  'atob',
  'btoa',
  'crypto',
  'fetch',
  'performance',
  'structuredClone',
]);

/**
 * Pins Jest's environment in a suite's docblock: Jest before 27 defaults to jsdom (no TextEncoder for pg, browser
 * globals instead of Node's), and a project configured for jsdom (a React app's API folder) would load it there too.
 * Jest reads the docblock only as the file's first comment, so it goes above 'use strict' and the imports.
 */
export function pinJestEnvironment(code: string): string {
  if (/^\s*\/\*\*[\s\S]*?@jest-environment\b[\s\S]*?\*\//.test(code)) return code;
  return `/**\n * @jest-environment node\n */\n${code}`;
}

/**
 * A file that uses one of SANDBOX_GAPS as a global gets it bound from Node's own context (vm.runInThisContext runs
 * in the context Node's modules belong to, not Jest's), unless the sandbox has it: the same object outside Jest, and
 * the real one inside an old Jest. Names the file declares itself are left alone. A global the templates read by
 * shape (`(globalThis as unknown as { fetch: Shape }).fetch`, for typings that declare none) reads the Jest
 * sandbox's global object, so the read becomes the bound name. `style` is how the file imports: `import`
 * (TypeScript, ES modules) or `require` (CommonJS JavaScript).
 */
export function bindSandboxGlobals(ts: Ts, code: string, fileName: string, style: 'import' | 'require'): string {
  const javascript = /\.[cm]?js$/.test(fileName);
  const file = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, javascript ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const used = new Set<string>();
  const declared = new Set<string>();
  const reads: Array<{ start: number; end: number; name: string }> = [];
  const visit = (node: Node): void => {
    if (ts.isPropertyAccessExpression(node) && SANDBOX_GAPS.has(node.name.text) && readsGlobalThis(ts, node.expression)) {
      reads.push({ start: node.getStart(), end: node.end, name: node.name.text });
      used.add(node.name.text);
      return;
    }
    if (ts.isIdentifier(node) && SANDBOX_GAPS.has(node.text)) {
      if (isDeclarationName(ts, node)) declared.add(node.text);
      else if (isValueReference(ts, node)) used.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return withSandboxBindings(code, afterImports(ts, file), used, declared, reads, javascript ? 'javascript' : 'typescript', style);
}

/**
 * The bindings for the globals a file uses (`used` less `declared`) inserted at `at` (after its imports), and its
 * reads through globalThis made reads of the bound name: shared by the compiler's reading (bindSandboxGlobals) and
 * the direct one of house-style JavaScript (profile/javascriptProfile.ts), so both write the same text.
 */
export function withSandboxBindings(
  code: string,
  at: number,
  used: ReadonlySet<string>,
  declared: ReadonlySet<string>,
  reads: ReadonlyArray<{ start: number; end: number; name: string }>,
  language: 'javascript' | 'typescript',
  style: 'import' | 'require',
): string {
  const javascript = language === 'javascript';
  const names = [...used].filter((name) => !declared.has(name)).sort();
  if (names.length === 0) return code;
  const vm = style === 'import' ? "import { runInThisContext } from 'node:vm';" : "const { runInThisContext } = require('node:vm');";
  const quoted = (name: string) => `'${name}'`;
  const binding = (name: string) =>
    javascript
      ? `const ${name} = globalThis.${name} ?? runInThisContext(${quoted(name)});`
      : `const ${name}: SandboxGlobal<${quoted(name)}> =\n  (globalThis as SandboxGlobals).${name} ?? runInThisContext(${quoted(name)});`;
  // `typeof globalThis.fetch` would not compile under typings that predate the global (fetch and Response before
  // @types/node 18, performance before 16): the global's own type where declared, else what runInThisContext
  // returns (any), as the binding did before.
  const types = javascript
    ? ''
    : `type SandboxGlobal<K extends string> = typeof globalThis extends Record<K, infer T> ? T : ReturnType<typeof runInThisContext>;\ntype SandboxGlobals = { readonly [K in ${names.map(quoted).join(' | ')}]?: SandboxGlobal<K> };\n`;
  const insert = `${vm}\n\n// Jest before 28 leaves these Node globals out of its test sandbox: Node's own, when the sandbox lacks them.\n${types}${names.map(binding).join('\n')}\n`;
  let body = code.slice(at);
  for (const read of reads.filter(({ name }) => !declared.has(name)).sort((a, b) => b.start - a.start)) {
    body = body.slice(0, read.start - at) + read.name + body.slice(read.end - at);
  }
  const rest = body.replace(/^\n+/, '');
  return at === 0 ? `${insert}\n${rest}` : `${code.slice(0, at)}\n${insert}\n${rest}`;
}

/** `globalThis`, `(globalThis)` or `globalThis as unknown as { … }` (in any nesting of those). */
function readsGlobalThis(ts: Ts, expression: TsMorph.ts.Expression): boolean {
  let inner = expression;
  while (ts.isParenthesizedExpression(inner) || ts.isAsExpression(inner) || ts.isTypeAssertionExpression(inner)) inner = inner.expression;
  return ts.isIdentifier(inner) && inner.text === 'globalThis';
}

/** Where the file's imports end: after its last import (or top-level require), else after its directives. */
function afterImports(ts: Ts, file: TsMorph.ts.SourceFile): number {
  let end = 0;
  for (const statement of file.statements) {
    const isImport = ts.isImportDeclaration(statement) || ts.isImportEqualsDeclaration(statement) || isRequireStatement(ts, statement);
    const isDirective = ts.isExpressionStatement(statement) && ts.isStringLiteral(statement.expression);
    if (isImport || (isDirective && end === 0)) end = statement.end;
    else break;
  }
  return end;
}

function isRequireStatement(ts: Ts, statement: TsMorph.ts.Statement): boolean {
  if (!ts.isVariableStatement(statement)) return false;
  return statement.declarationList.declarations.every((declaration) => {
    const init = declaration.initializer;
    return init !== undefined && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'require';
  });
}

function isDeclarationName(ts: Ts, node: TsMorph.ts.Identifier): boolean {
  const parent = node.parent;
  return (
    ((ts.isVariableDeclaration(parent) || ts.isParameter(parent) || ts.isFunctionDeclaration(parent) || ts.isClassDeclaration(parent) || ts.isBindingElement(parent)) && parent.name === node) ||
    ts.isImportSpecifier(parent) ||
    ts.isImportClause(parent) ||
    ts.isNamespaceImport(parent) ||
    (ts.isImportEqualsDeclaration(parent) && parent.name === node)
  );
}

/** An identifier read as a value from the global scope: not a type, a property name or a member access's name. */
function isValueReference(ts: Ts, node: TsMorph.ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isTypeReferenceNode(parent) || ts.isExpressionWithTypeArguments(parent) || ts.isQualifiedName(parent) || ts.isTypeQueryNode(parent)) return false;
  if ((ts.isPropertyAccessExpression(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent) || ts.isMethodSignature(parent)) && parent.name === node) return false;
  if (ts.isShorthandPropertyAssignment(parent)) return true;
  if (ts.isExportSpecifier(parent) || ts.isInterfaceDeclaration(parent) || ts.isTypeAliasDeclaration(parent)) return false;
  return true;
}
