import { ts } from 'ts-morph';
import { isFunctionLike, objectProperty, unwrap } from '../inspect/parse/astHelpers.js';
import { innermostFunction, localInitializer } from './walk.js';

/** Calls whose value differs on every attempt: a clock, a random source, a fresh id. */
const VOLATILE_CALL = /^(Date\.now|performance\.now|Math\.random|(crypto\.)?randomUUID|(crypto\.)?randomBytes|(crypto\.)?randomInt|uuid|uuidv4|v4|uuid\.v4|uuidv1|v1|uuid\.v1|uuidv7|v7|uuid\.v7|nanoid|cuid|cuid2|createId|ulid|generateId|ObjectId)$/;

/** Date libraries' "now": `dayjs()` and `moment()` read the clock when called without an argument. */
export const CLOCK_LIBRARY_CALL = /^(dayjs|moment)$/;

/**
 * The first sub-expression of `expr` whose value changes between two attempts of the same request, looking one step
 * through local constants. `new Date()`, `dayjs()` and `moment()` without arguments count; `new Date(order.createdAt)`
 * does not.
 */
export function volatilePart(expr: ts.Node, depth = 0): ts.Node | undefined {
  return volatileParts(expr, depth, true)[0];
}

/**
 * Every such sub-expression, outermost only (`` `x-${Date.now()}-${randomUUID()}` `` gives both calls): what apply's
 * stable-params transform replaces, found by the same test the rules use.
 */
export function volatileParts(expr: ts.Node, depth = 0, firstOnly = false): ts.Node[] {
  if (depth > 2) return [];
  const found: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    if (firstOnly && found.length > 0) return;
    const callee = ts.isCallExpression(node) ? node.expression.getText().replace(/\s+/g, '') : undefined;
    if (callee !== undefined && (VOLATILE_CALL.test(callee) || (CLOCK_LIBRARY_CALL.test(callee) && (node as ts.CallExpression).arguments.length === 0))) found.push(node);
    else if (ts.isNewExpression(node) && node.expression.getText() === 'Date' && !(node.arguments?.length)) found.push(node);
    else if (ts.isIdentifier(node) && !isPropertyName(node) && isVolatileLocal(node, expr, depth)) found.push(node);
    else if (ts.isConditionalExpression(node) && isContextGuard(node)) visit(node.whenTrue);
    else ts.forEachChild(node, visit);
  };
  visit(expr);
  return found;
}

/**
 * The per-attempt value `expr` holds, named as written (`randomUUID()`, `new Date()`), or undefined: a fresh id,
 * clock or random call in the expression, or a const of the same function initialised with one. A property of a
 * local object (`row.id`) counts only when that object literal sets it fresh; `event.id` of a parsed event does
 * not, even when the event was built next to a timestamp. Module-level consts are made once per process, so they are
 * not per attempt. What dedupe evidence and write facts ask of a conflict key.
 */
export function perAttemptValue(expr: ts.Expression, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) {
    const init = functionConst(node);
    return init ? perAttemptValue(init, depth + 1) : undefined;
  }
  if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
    const holder = unwrap(node.expression);
    const init = ts.isIdentifier(holder) ? functionConst(holder) : undefined;
    const name = ts.isPropertyAccessExpression(node) ? node.name.text : ts.isStringLiteral(node.argumentExpression) ? node.argumentExpression.text : undefined;
    const value = init && name !== undefined ? objectProperty(unwrap(init), name) : undefined;
    return value ? perAttemptValue(value, depth + 1) : undefined;
  }
  if (ts.isTemplateExpression(node)) {
    for (const span of node.templateSpans) {
      const found = perAttemptValue(span.expression, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) return perAttemptValue(node.left, depth + 1) ?? perAttemptValue(node.right, depth + 1);
  if (!ts.isCallExpression(node) && !ts.isNewExpression(node)) return undefined;
  // MongoDB's `new ObjectId()` is a fresh id too; apart from the clocks and ids above because stable-params
  // rewrites every other `new` it finds into `new Date(startedAt)`.
  const objectId = newObjectId(node);
  if (objectId) return 'new ObjectId()';
  const part = volatilePart(node, 1);
  if (!part) return undefined;
  if (ts.isIdentifier(part)) return perAttemptValue(part, depth + 1);
  return nameOf(part);
}

function newObjectId(node: ts.Node): boolean {
  if (ts.isNewExpression(node) && /^(\w+\.)?ObjectId$/.test(node.expression.getText()) && !node.arguments?.length) return true;
  return ts.forEachChild(node, (child) => (isFunctionLike(child) ? undefined : newObjectId(child) || undefined)) === true;
}

/** `randomUUID()`, `uuid.v4()`, `new Date()`: the callee as written, arguments elided, so a message can quote it. */
function nameOf(node: ts.Node): string {
  if (ts.isNewExpression(node)) return `new ${node.expression.getText().replace(/\s+/g, '')}()`;
  if (ts.isCallExpression(node)) return `${node.expression.getText().replace(/\s+/g, '')}(${node.arguments.length ? '…' : ''})`;
  return node.getText().replace(/\s+/g, ' ');
}

/** The initialiser of a `const` declared in the same function as `id` (not in a function nested inside it). */
function functionConst(id: ts.Identifier): ts.Expression | undefined {
  const scope = innermostFunction(id);
  if (!scope) return undefined;
  let found: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (found || (node !== scope && isFunctionLike(node))) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer && ts.isVariableDeclarationList(node.parent) && (node.parent.flags & ts.NodeFlags.Const) !== 0) found = node.initializer;
    else ts.forEachChild(node, visit);
  };
  visit(scope);
  return found;
}

/** The helpers of the generated providers.ts that derive a key from a context: the same value on every attempt. */
const DERIVED_KEY_HELPER = /^(stripeRequestOptions|adyenIdempotency|paypalRequestId|providerKey)$/;

/**
 * `context ? stripeRequestOptions(context).idempotencyKey : randomUUID()`, as apply keys a service call: every attempt
 * given the context sends the derived key; the per-call fallback is what a caller without one sent before, which the
 * edit leaves as it was, so it is no per-attempt key of the protected path.
 */
export function isContextGuard(node: ts.ConditionalExpression): boolean {
  const condition = unwrap(node.condition);
  if (!ts.isIdentifier(condition)) return false;
  let derived = unwrap(node.whenTrue);
  // `stripeRequestOptions(context).idempotencyKey`, `adyenIdempotency(context, 1).idempotencyKey`
  if (ts.isPropertyAccessExpression(derived)) derived = unwrap(derived.expression);
  if (!ts.isCallExpression(derived) || !ts.isIdentifier(derived.expression) || !DERIVED_KEY_HELPER.test(derived.expression.text)) return false;
  const first = derived.arguments[0];
  return first !== undefined && ts.isIdentifier(first) && first.text === condition.text;
}

function isVolatileLocal(id: ts.Identifier, expr: ts.Node, depth: number): boolean {
  const init = localInitializer(id);
  return init !== undefined && init !== expr && volatilePart(unwrap(init), depth + 1) !== undefined;
}

function isPropertyName(id: ts.Identifier): boolean {
  const parent = id.parent;
  return (ts.isPropertyAccessExpression(parent) && parent.name === id) || (ts.isPropertyAssignment(parent) && parent.name === id);
}
