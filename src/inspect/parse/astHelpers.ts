import { ts } from 'ts-morph';

/** The literal value of a string-ish expression, resolving same-file string constants and simple templates. */
export function stringValue(node: ts.Node | undefined, consts?: ReadonlyMap<string, ts.Expression>, depth = 0): string | undefined {
  if (!node || depth > 4) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
    return stringValue(node.expression, consts, depth + 1);
  }
  if (ts.isIdentifier(node) && consts) return stringValue(consts.get(node.text), consts, depth + 1);
  if (ts.isTemplateExpression(node)) {
    let out = node.head.text;
    for (const span of node.templateSpans) {
      const part = stringValue(span.expression, consts, depth + 1);
      if (part === undefined) return undefined;
      out += part + span.literal.text;
    }
    return out;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = stringValue(node.left, consts, depth + 1);
    const right = stringValue(node.right, consts, depth + 1);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  return undefined;
}

/** Like stringValue, but unresolved template parts become `{expr}` so a URL's host and path still show. */
export function looseStringValue(node: ts.Node | undefined, consts?: ReadonlyMap<string, ts.Expression>): string | undefined {
  if (!node) return undefined;
  const exact = stringValue(node, consts);
  if (exact !== undefined) return exact;
  if (ts.isTemplateExpression(node)) {
    let out = node.head.text;
    for (const span of node.templateSpans) {
      out += (stringValue(span.expression, consts) ?? `{${span.expression.getText()}}`) + span.literal.text;
    }
    return out;
  }
  // 'https://api-m.paypal.com/v2/checkout/orders/' + id + '/capture'
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = looseStringValue(node.left, consts);
    if (left === undefined) return undefined;
    return left + (looseStringValue(node.right, consts) ?? `{${node.right.getText()}}`);
  }
  return undefined;
}

/**
 * A name for display: the string it evaluates to, else its source text as `{definition.id}` (looseStringValue's
 * notation), whitespace collapsed and cut at 40 characters.
 */
export function displayName(node: ts.Node | undefined, consts?: ReadonlyMap<string, ts.Expression>): string | undefined {
  if (!node) return undefined;
  const exact = looseStringValue(node, consts);
  if (exact !== undefined) return exact;
  const text = node.getText().replace(/\s+/g, ' ');
  return `{${text.length > 40 ? `${text.slice(0, 39)}…` : text}}`;
}

/** `a.b.c` as ['a','b','c']; `this.x` gives ['this','x']; calls in the chain keep their callee name with `()`. */
export function accessChain(node: ts.Expression): string[] {
  const parts: string[] = [];
  let current: ts.Expression = node;
  for (;;) {
    if (ts.isPropertyAccessExpression(current)) {
      parts.unshift(current.name.text);
      current = current.expression;
    } else if (ts.isElementAccessExpression(current) && ts.isStringLiteral(current.argumentExpression)) {
      parts.unshift(current.argumentExpression.text);
      current = current.expression;
    } else if (ts.isCallExpression(current)) {
      const inner = accessChain(current.expression);
      const last = inner.pop();
      parts.unshift(...inner, `${last ?? ''}()`);
      return parts;
    } else if (ts.isParenthesizedExpression(current) || ts.isNonNullExpression(current) || ts.isAsExpression(current)) {
      current = current.expression;
    } else if (ts.isIdentifier(current)) {
      parts.unshift(current.text);
      return parts;
    } else if (current.kind === ts.SyntaxKind.ThisKeyword) {
      parts.unshift('this');
      return parts;
    } else {
      parts.unshift('?');
      return parts;
    }
  }
}

export function calleeName(call: ts.CallExpression | ts.NewExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

export function lineOf(sf: ts.SourceFile, node: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

export function propertyName(name: ts.PropertyName | ts.BindingName | undefined): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isPrivateIdentifier(name)) return name.text;
  return undefined;
}

/** A property of an object literal by name, or undefined. */
export function objectProperty(obj: ts.Node | undefined, name: string): ts.Expression | undefined {
  if (!obj || !ts.isObjectLiteralExpression(obj)) return undefined;
  for (const prop of obj.properties) {
    if (ts.isPropertyAssignment(prop) && propertyName(prop.name) === name) return prop.initializer;
    if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === name) return prop.name;
  }
  return undefined;
}

/** Whether any object literal inside `node` (at any depth) has a property whose name matches. */
export function hasPropertyNamed(node: ts.Node, test: (name: string) => boolean): boolean {
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) {
      const name = propertyName(n.name);
      if (name !== undefined && test(name)) {
        found = true;
        return;
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/** A flag per syntax kind (indexing a typed array is cheaper than a Set lookup, and this runs for every node walked). */
const FUNCTION_LIKE_KINDS = new Uint8Array(ts.SyntaxKind.Count);
for (const kind of [
  ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.FunctionExpression, ts.SyntaxKind.ArrowFunction, ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor, ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor,
]) FUNCTION_LIKE_KINDS[kind] = 1;

/** Function declarations and expressions, arrows, methods, constructors and accessors: one lookup, called for every node walked. */
export function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return FUNCTION_LIKE_KINDS[node.kind] === 1;
}

/** Strips wrappers that do not change what an expression is: parens, `as`, `!`, `await`. */
export function unwrap(node: ts.Expression): ts.Expression {
  let current = node;
  while (
    ts.isParenthesizedExpression(current) || ts.isAsExpression(current) || ts.isNonNullExpression(current) ||
    ts.isAwaitExpression(current) || ts.isSatisfiesExpression(current) || ts.isTypeAssertionExpression(current)
  ) {
    current = current.expression;
  }
  return current;
}

export function decoratorsOf(node: ts.Node): readonly ts.Decorator[] {
  return ts.canHaveDecorators(node) ? (ts.getDecorators(node) ?? []) : [];
}

/** `@Name(...)` → ['Name', call] for a decorator. */
export function decoratorCall(decorator: ts.Decorator): { name: string; args: readonly ts.Expression[] } | undefined {
  const expr = decorator.expression;
  if (ts.isCallExpression(expr)) {
    const name = ts.isIdentifier(expr.expression) ? expr.expression.text : ts.isPropertyAccessExpression(expr.expression) ? expr.expression.name.text : undefined;
    return name ? { name, args: expr.arguments } : undefined;
  }
  if (ts.isIdentifier(expr)) return { name: expr.text, args: [] };
  return undefined;
}
