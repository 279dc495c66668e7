import { ts } from 'ts-morph';
import { unwrap } from '../inspect/parse/astHelpers.js';
import { localInitializer } from './walk.js';

/** Calls whose value differs on every attempt: a clock, a random source, a fresh id. */
const VOLATILE_CALL = /^(Date\.now|performance\.now|Math\.random|(crypto\.)?randomUUID|(crypto\.)?randomBytes|(crypto\.)?randomInt|uuid|uuidv4|v4|uuid\.v4|nanoid|cuid|cuid2|createId|ulid|generateId|ObjectId)$/;

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
