import { ts } from 'ts-morph';
import { isFunctionLike, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';

/** What a raw-HTTP call's arguments show of one header. */
export interface HttpHeaderValue {
  /** The value the call sends in the header, when it sends it where the file shows. */
  value?: ts.Expression;
  /** Part of the headers is built out of sight (a parameter, a call's result, a spread of one): the header may be there. */
  opaque: boolean;
}

/**
 * The value a raw-HTTP call sends in `header`: a property of its options or headers literal (through local objects
 * and `new Headers({…})`), or set on a Headers object or config it passes before the call
 * (`headers.set('Idempotency-Key', …)`, `headers.append(…)`, `config.headers['Idempotency-Key'] = …`).
 */
export function httpHeaderValue(call: ts.CallExpression, args: readonly ts.Expression[], header: RegExp): HttpHeaderValue {
  const holders = new Set<string>();
  let opaque = false;
  let value: ts.Expression | undefined;
  // `headers` values and options objects are followed; other properties (the body) never hold a header.
  const follow = (expr: ts.Expression, depth: number): void => {
    const node = unwrap(expr);
    if (value || depth > 3) return;
    if (ts.isObjectLiteralExpression(node)) {
      for (const prop of node.properties) {
        if (ts.isPropertyAssignment(prop) && header.test(propertyName(prop.name) ?? '')) value = prop.initializer;
        else if (ts.isPropertyAssignment(prop) && propertyName(prop.name) === 'headers') follow(prop.initializer, depth + 1);
        else if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === 'headers') follow(prop.name, depth + 1);
        else if (ts.isSpreadAssignment(prop)) follow(prop.expression, depth + 1);
      }
    } else if (ts.isIdentifier(node)) {
      holders.add(node.text);
      const init = initializerOf(node);
      if (init) follow(init, depth + 1);
      else opaque = true;
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Headers') {
      const init = node.arguments?.[0];
      if (init && ts.isArrayLiteralExpression(unwrap(init))) value = pairValue(unwrap(init) as ts.ArrayLiteralExpression, header);
      else if (init) follow(init, depth + 1);
    } else if (!ts.isStringLiteralLike(node) && node.kind !== ts.SyntaxKind.UndefinedKeyword) opaque = true;
  };
  for (const arg of args) follow(arg, 0);
  const sent = value ?? setBefore(call, holders, header);
  return { ...(sent ? { value: sent } : {}), opaque };
}

/** The initializer of the variable `id` names, from the nearest function around it that declares one (then the module). */
function initializerOf(id: ts.Identifier): ts.Expression | undefined {
  for (let scope: ts.Node | undefined = id.parent; scope; scope = scope.parent) {
    if (!isFunctionLike(scope) && !ts.isSourceFile(scope)) continue;
    let found: ts.Expression | undefined;
    const visit = (node: ts.Node): void => {
      if (found) return;
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer) found = node.initializer;
      else ts.forEachChild(node, visit);
    };
    visit(scope);
    if (found) return found;
  }
  return undefined;
}

/** `new Headers([['Idempotency-Key', key]])`: the pair's value. */
function pairValue(pairs: ts.ArrayLiteralExpression, header: RegExp): ts.Expression | undefined {
  for (const pair of pairs.elements) {
    const [name, value] = ts.isArrayLiteralExpression(pair) ? pair.elements : [];
    if (name && value && header.test(stringValue(name) ?? '')) return value;
  }
  return undefined;
}

/** The header set on one of `holders` before the call, in the function around it (or the module). */
function setBefore(call: ts.CallExpression, holders: ReadonlySet<string>, header: RegExp): ts.Expression | undefined {
  if (holders.size === 0) return undefined;
  // `headers` or `config.headers`: the Headers object passed, or the headers of the config passed.
  const holds = (expr: ts.Expression): boolean => {
    const node = unwrap(expr);
    if (ts.isIdentifier(node)) return holders.has(node.text);
    return ts.isPropertyAccessExpression(node) && node.name.text === 'headers' && holds(node.expression);
  };
  const scope = enclosingFunctions(call).outermost ?? call.getSourceFile();
  let found: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (found || node.pos >= call.pos) return;
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(set|append)$/.test(node.expression.name.text) && holds(node.expression.expression)) {
      const [name, set] = node.arguments;
      if (name && set && header.test(stringValue(name) ?? '')) found = set;
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isElementAccessExpression(node.left) && holds(node.left.expression)) {
      if (header.test(stringValue(node.left.argumentExpression) ?? '')) found = node.right;
    }
    ts.forEachChild(node, visit);
  };
  visit(scope);
  return found;
}
