import { builtinModules } from 'node:module';
import type * as TsMorph from 'ts-morph';

// TypeScript is passed in (applyProfile loads it): readProjectProfile imports this file and must not load it.
type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;

/**
 * Jest before 27 resolves `node:crypto` as a package name and fails ("Cannot find module 'node:crypto'"), in a
 * TypeScript suite under ts-jest as in JavaScript. Such a project gets bare builtin specifiers (`crypto`) in every
 * generated file. `jestVersion` is major * 100 + minor, as readProjectProfile reads it; undefined = no Jest.
 */
export function needsBareBuiltins(jestVersion: number | undefined): boolean {
  return jestVersion !== undefined && jestVersion < 2700;
}

const BARE = new Set(builtinModules);
const MOCKS = new Set(['mock', 'doMock', 'unmock', 'requireActual', 'requireMock']);

/** `node:fs/promises` → `fs/promises`; undefined for specifiers with no bare form (`node:test`) or that are not builtins. */
export function bareName(specifier: string): string | undefined {
  if (!specifier.startsWith('node:')) return undefined;
  const name = specifier.slice('node:'.length);
  return BARE.has(name) ? name : undefined;
}

/**
 * Every module specifier in `code` that names a builtin with its `node:` prefix, without it: import/export
 * declarations, `import x = require()`, `import()` and `require()` calls, `import('…')` types and the module argument
 * of `jest.mock()`-style calls. The quotes and everything else stay as written.
 */
export function toBareBuiltins(ts: Ts, code: string, fileName: string): string {
  if (!code.includes('node:')) return code;
  const kind = /\.[cm]?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const file = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, kind);
  const literals: TsMorph.ts.StringLiteral[] = [];
  const take = (node: Node | undefined) => {
    if (node && ts.isStringLiteral(node) && bareName(node.text) !== undefined) literals.push(node);
  };
  const visit = (node: Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) take(node.moduleSpecifier);
    else if (ts.isExternalModuleReference(node)) take(node.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) take(node.argument.literal);
    else if (ts.isCallExpression(node) && isModuleCall(ts, node)) take(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(file);
  let out = code;
  for (const literal of literals.sort((a, b) => b.getStart() - a.getStart())) {
    out = out.slice(0, literal.getStart() + 1) + bareName(literal.text)! + out.slice(literal.end - 1);
  }
  return out;
}

/** `import('m')`, `require('m')`, `jest.mock('m')` and its kin. */
function isModuleCall(ts: Ts, call: TsMorph.ts.CallExpression): boolean {
  const callee = call.expression;
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (ts.isIdentifier(callee)) return callee.text === 'require';
  return ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'jest' && MOCKS.has(callee.name.text);
}
