import { ts } from 'ts-morph';
import { propertyName } from './astHelpers.js';

/**
 * A name for a function-like node that other files can refer to: `name`, `Class.method`, `object.method`,
 * `<default>` for an anonymous default export, or `<anon@pos>`. Lower-cased because call sites are matched by
 * convention (`this.ordersService.create` ↔ `OrdersService.create`), not by type.
 */
export function functionKeyOf(node: ts.Node): string {
  return rawFunctionName(node).toLowerCase();
}

/** The display name of a function-like node (original case), or undefined when it is anonymous. */
export function functionName(node: ts.Node): string | undefined {
  const name = rawFunctionName(node);
  return name.startsWith('<') ? undefined : name;
}

/** Raw binding name (original case), `<default>` or `<anon@pos>`: how owners of routes are referred to. */
export function rawFunctionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name) {
    if (ts.isFunctionExpression(node)) {
      const outer = holderName(node);
      if (outer) return outer;
    }
    return node.name.text;
  }
  if (ts.isFunctionDeclaration(node)) return isDefaultExport(node) ? '<default>' : anonName(node);
  if ((ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) && node.name) {
    const member = propertyName(node.name) ?? '?';
    const owner = ts.isClassLike(node.parent)
      ? node.parent.name?.text
      : ts.isObjectLiteralExpression(node.parent) ? objectHolder(node.parent) : undefined;
    return owner ? `${owner}.${member}` : member;
  }
  return holderName(node) ?? anonName(node);
}

/** Anonymous functions are unique per file position, so two files never share one. */
function anonName(node: ts.Node): string {
  return `<anon@${node.getSourceFile().fileName}:${node.pos}>`;
}

/** The name a function expression is stored under: `const x = () => {}`, `{ x: () => {} }`, class fields. */
function holderName(node: ts.Node): string | undefined {
  let parent = node.parent;
  // `const handler = wrap(async () => {})` still names the inner function after the variable.
  while (parent && (ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent) || (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression)))) {
    node = parent;
    parent = parent.parent;
  }
  if (!parent) return undefined;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent)) {
    const member = propertyName(parent.name);
    const owner = ts.isObjectLiteralExpression(parent.parent) ? objectHolder(parent.parent) : undefined;
    return member ? (owner ? `${owner}.${member}` : member) : undefined;
  }
  if (ts.isPropertyDeclaration(parent) && ts.isClassLike(parent.parent)) {
    const member = propertyName(parent.name);
    return member ? `${parent.parent.name?.text ?? '?'}.${member}` : undefined;
  }
  if (ts.isExportAssignment(parent)) return '<default>';
  // module.exports = function (app) {…}: the CommonJS default export.
  // (The text is read only for a `….exports` on the left: getText() walks up to the file and skips leading trivia,
  // and the compiled `var __awaiter = (this && this.__awaiter) || function …` of every TypeScript output file asks.)
  if (ts.isBinaryExpression(parent) && parent.right === node && namesExports(parent.left) && /^module\.exports$/.test(parent.left.getText())) return '<default>';
  // exports.pay = async (req, res) => {…} (or module.exports.pay): routes refer to it as `controller.pay`.
  if (ts.isBinaryExpression(parent) && parent.right === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(parent.left) && (namesExports(parent.left.expression) || (ts.isIdentifier(parent.left.expression) && parent.left.expression.text === 'exports')) && /^(module\.)?exports$/.test(parent.left.expression.getText())) return parent.left.name.text;
  return undefined;
}

/** `x.exports`: what an expression whose text is `module.exports` always is. */
function namesExports(expr: ts.Expression): boolean {
  return ts.isPropertyAccessExpression(expr) && ts.isIdentifier(expr.name) && expr.name.text === 'exports';
}

function objectHolder(obj: ts.ObjectLiteralExpression): string | undefined {
  const parent = obj.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

function isDefaultExport(node: ts.FunctionDeclaration): boolean {
  const mods = ts.getModifiers(node) ?? [];
  return mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
}
