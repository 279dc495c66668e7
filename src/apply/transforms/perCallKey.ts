import { ts } from 'ts-morph';
import { volatilePart } from '../../findings/volatile.js';
import { localInitializer } from '../../findings/walk.js';
import { unwrap } from '../../inspect/parse/astHelpers.js';

const within = (node: ts.Node, fn: ts.Node) => node.pos >= fn.pos && node.end <= fn.end;

/**
 * A key the call sends already but makes anew on each call (`idempotencyKey: randomUUID()`, the findings' volatilePart):
 * `part` is what becomes `context ? derived : part`, in the key itself or in the initializer of the local it names;
 * `refused` says why apply leaves it to the user.
 */
export interface PerCallKey {
  part: ts.Expression;
  refused?: string;
}

/** Identifiers named `name` in `fn` that read it: not a declaration's name, a property's name or a literal's key. */
function readsOf(fn: ts.FunctionLikeDeclaration, name: string): number {
  let count = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === name) {
      const parent = node.parent;
      const named = (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isParameter(parent) || ts.isBindingElement(parent)) && parent.name === node;
      if (!named && !(ts.isPropertyAccessExpression(parent) && parent.name === node)) count += 1;
    }
    ts.forEachChild(node, visit);
  };
  if (fn.body) visit(fn.body);
  return count;
}

/**
 * How a key the call sends is made anew on each call, or undefined when it is stable (or keyed from the context
 * already). The part guarded is the key, or the initializer of the local it names when that local feeds nothing else;
 * past a caller's key taken first (`options?.idempotencyKey || randomUUID()`), only the fallback, so the caller's key
 * still wins.
 */
export function perCallKey(key: ts.Expression, fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): PerCallKey | undefined {
  if (volatilePart(key) === undefined) return undefined;
  let part = key;
  const named = unwrap(key);
  if (ts.isIdentifier(named)) {
    const init = localInitializer(named);
    const declaration = init?.parent;
    if (!init || !declaration || !ts.isVariableDeclaration(declaration) || !within(declaration, fn)) return { part: key, refused: `its key \`${named.text}\` is made outside the function that sends it` };
    const reads = readsOf(fn, named.text);
    if (reads > 1) return { part: key, refused: `its key \`${named.text}\` (\`${init.getText(sf)}\`) also feeds ${reads - 1} other place${reads > 2 ? 's' : ''} in the function, which would change with it` };
    part = init;
  }
  for (let node = unwrap(part); ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.BarBarToken || node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken) && volatilePart(node.left) === undefined; node = unwrap(node.right)) part = node.right;
  return { part };
}
