import { Node, SyntaxKind, type SourceFile } from 'ts-morph';
import { KEY_FUNCTION } from './types.js';

/** The literal module a `require('…')` or `import('…')` call loads, else undefined. */
export function requiredModule(node: Node | undefined): string | undefined {
  if (!node || !Node.isCallExpression(node)) return undefined;
  const callee = node.getExpression();
  const isLoader = (Node.isIdentifier(callee) && callee.getText() === 'require') || callee.getKind() === SyntaxKind.ImportKeyword;
  const [first] = node.getArguments();
  return isLoader && node.getArguments().length === 1 && first && Node.isStringLiteral(first) ? first.getLiteralValue() : undefined;
}

/**
 * Names the file binds to a module's main export: `import x from 'm'`, `import * as x from 'm'`, `import x = require('m')`
 * and `const x = require('m')` (top level or not), in source order.
 */
export function moduleBindings(sf: SourceFile, modules: ReadonlySet<string>): string[] {
  const names: string[] = [];
  for (const declaration of sf.getImportDeclarations()) {
    if (declaration.isTypeOnly() || !modules.has(declaration.getModuleSpecifierValue())) continue;
    const name = declaration.getDefaultImport() ?? declaration.getNamespaceImport();
    if (name) names.push(name.getText());
  }
  for (const declaration of sf.getDescendantsOfKind(SyntaxKind.ImportEqualsDeclaration)) {
    const reference = declaration.getModuleReference();
    if (Node.isExternalModuleReference(reference) && modules.has(reference.getExpression()?.getText().slice(1, -1) ?? '')) names.push(declaration.getName());
  }
  for (const declaration of sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration)) {
    const loaded = requiredModule(declaration.getInitializer());
    if (loaded !== undefined && modules.has(loaded) && Node.isIdentifier(declaration.getNameNode())) names.push(declaration.getName());
  }
  return names;
}

/** Whether the file loads any of the modules (imports, `require`, `import()`). */
export function loadsModule(sf: SourceFile, modules: ReadonlySet<string>): boolean {
  if (sf.getImportDeclarations().some((d) => modules.has(d.getModuleSpecifierValue()))) return true;
  return sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => modules.has(requiredModule(call) ?? ''));
}

/** Whether the file assigns `<anything>.<holder>.<local> = …`: an earlier apply, or the user, gave the views the key. */
export function assignsLocal(sf: SourceFile, holder: string, local: string): boolean {
  return sf.getDescendantsOfKind(SyntaxKind.BinaryExpression).some((binary) => {
    if (binary.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return false;
    const left = binary.getLeft();
    if (!Node.isPropertyAccessExpression(left) || left.getName() !== local) return false;
    const owner = left.getExpression();
    return Node.isPropertyAccessExpression(owner) && owner.getName() === holder;
  });
}

/** Index (as insertStatements counts, comments included) of the block's statement that binds newIdempotencyKey, or -1. */
export function keyFunctionStatement(statements: readonly Node[]): number {
  return statements.findIndex((s) => Node.isVariableStatement(s) && s.getDeclarations().some((d) => new RegExp(`\\b${KEY_FUNCTION}\\b`).test(d.getNameNode().getText())));
}
