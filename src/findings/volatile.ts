import { ts } from 'ts-morph';
import { unwrap } from '../inspect/parse/astHelpers.js';
import { localInitializer } from './walk.js';

/** Calls whose value differs on every attempt: a clock, a random source, a fresh id. */
const VOLATILE_CALL = /^(Date\.now|performance\.now|Math\.random|(crypto\.)?randomUUID|(crypto\.)?randomBytes|(crypto\.)?randomInt|uuid|uuidv4|v4|uuid\.v4|nanoid|cuid|cuid2|createId|ulid|generateId|ObjectId)$/;

/**
 * The first sub-expression of `expr` whose value changes between two attempts of the same request, looking one step
 * through local constants. `new Date()` without arguments counts; `new Date(order.createdAt)` does not.
 */
export function volatilePart(expr: ts.Node, depth = 0): ts.Node | undefined {
  if (depth > 2) return undefined;
  let found: ts.Node | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(node) && VOLATILE_CALL.test(node.expression.getText().replace(/\s+/g, ''))) found = node;
    else if (ts.isNewExpression(node) && node.expression.getText() === 'Date' && !(node.arguments?.length)) found = node;
    else if (ts.isIdentifier(node) && !isPropertyName(node)) {
      const init = localInitializer(node);
      if (init && init !== expr && volatilePart(unwrap(init), depth + 1)) found = node;
    }
    if (!found) ts.forEachChild(node, visit);
  };
  visit(expr);
  return found;
}

function isPropertyName(id: ts.Identifier): boolean {
  const parent = id.parent;
  return (ts.isPropertyAccessExpression(parent) && parent.name === id) || (ts.isPropertyAssignment(parent) && parent.name === id);
}
