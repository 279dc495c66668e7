import { ts } from 'ts-morph';
import { isFunctionLike } from '../inspect/parse/astHelpers.js';

/** Every node under `root` (depth first, source order) that passes `test`. */
export function collect<T extends ts.Node>(root: ts.Node, test: (node: ts.Node) => node is T): T[] {
  const out: T[] = [];
  const visit = (node: ts.Node): void => {
    if (test(node)) out.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return out;
}

export function calls(root: ts.Node): ts.CallExpression[] {
  return collect(root, ts.isCallExpression);
}

/** The outermost function containing `node` (a route handler, an exported function), or undefined at top level. */
export function outermostFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  let found: ts.FunctionLikeDeclaration | undefined;
  for (let current = node.parent; current; current = current.parent) if (isFunctionLike(current) && current.body) found = current;
  return found;
}

export function innermostFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  for (let current = node.parent; current; current = current.parent) if (isFunctionLike(current) && current.body) return current;
  return undefined;
}

export function isLoop(node: ts.Node): node is ts.IterationStatement {
  return ts.isForStatement(node) || ts.isForOfStatement(node) || ts.isForInStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node);
}

/** Loops between `node` and its function, innermost first. */
export function enclosingLoops(node: ts.Node): ts.IterationStatement[] {
  const out: ts.IterationStatement[] = [];
  for (let current = node.parent; current && !isFunctionLike(current); current = current.parent) if (isLoop(current)) out.push(current);
  return out;
}

/** A loop that retries: `while`/`do`/counting `for` whose body catches errors and goes round again. */
export function isRetryLoop(loop: ts.IterationStatement): boolean {
  if (ts.isForOfStatement(loop) || ts.isForInStatement(loop)) return false;
  return collect(loop.statement, ts.isTryStatement).length > 0 || /retr|attempt|tries/i.test(loop.getText());
}

/** `a.b.c(...)` callee as 'a.b.c'; calls in the chain keep `()`. */
export function calleeText(call: ts.CallExpression): string {
  return call.expression.getText().replace(/\s+/g, '');
}

/** Name of a function-like node for messages: declaration name, variable it is assigned to, or method name. */
export function functionLabel(fn: ts.FunctionLikeDeclaration | undefined): string | undefined {
  if (!fn) return undefined;
  if (fn.name && (ts.isIdentifier(fn.name) || ts.isStringLiteral(fn.name))) return fn.name.text;
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  // CommonJS controllers: `exports.receive_webhook = async (req, res) => …`, `module.exports.create = function …`.
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && parent.right === fn && ts.isPropertyAccessExpression(parent.left)) return parent.left.name.text;
  return undefined;
}

/** Same-function `const x = …` initialisers, so a rule can look one step through a local variable. */
export function localInitializer(id: ts.Identifier): ts.Expression | undefined {
  const scope = innermostFunction(id) ?? id.getSourceFile();
  let found: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer) found = node.initializer;
    else ts.forEachChild(node, visit);
  };
  visit(scope);
  return found;
}
