import { Node, ts, type ArrayLiteralExpression, type ObjectLiteralExpression } from 'ts-morph';
import { unwrapExpression } from '../openApiConfig.js';
import { appendProperty } from '../sourceFile.js';

export type RouteMiddlewareEdit = { kind: 'wired' } | { kind: 'edited' } | { kind: 'manual'; reason: string };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** ` (routes.base)` for a reason, only when the code is a plain dotted name: other code text never reaches the message. */
const named = (node: Node) => (/^(\.\.\.)?[\w$.]{1,80}$/.test(node.getText()) ? ` (${node.getText()})` : '');

/** `idempotency.<codeName>`, or with `typed` `idempotency.<codeName> as import('hono').MiddlewareHandler<import('hono').Env>`, printed by the TS factory. */
export function ourMiddleware(codeName: string, typed: boolean, quote: 'single' | 'double'): string {
  const f = ts.factory;
  const access = f.createPropertyAccessExpression(f.createIdentifier('idempotency'), f.createIdentifier(codeName));
  const hono = (name: string, args?: ts.TypeNode[]) => f.createImportTypeNode(f.createLiteralTypeNode(f.createStringLiteral('hono', quote === 'single')), undefined, f.createIdentifier(name), args);
  const node = typed ? f.createAsExpression(access, hono('MiddlewareHandler', [hono('Env')])) : access;
  return ts.createPrinter({ removeComments: true }).printNode(ts.EmitHint.Expression, node, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));
}

/** `[a, b] as const`: a tuple, whose members' context types @hono/zod-openapi merges into the handler's context. */
function constTuple(node: Node): ArrayLiteralExpression | undefined {
  let current = node;
  while (Node.isParenthesizedExpression(current)) current = current.getExpression();
  if (!Node.isAsExpression(current) || current.getTypeNode()?.getText() !== 'const') return undefined;
  const inner = unwrapExpression(current.getExpression());
  return Node.isArrayLiteralExpression(inner) ? inner : undefined;
}

export interface RouteMiddlewareOptions {
  codeName: string;
  /** A TypeScript file: a tuple member gets the cast that keeps the route's other middleware's context types. */
  typed: boolean;
  quote: 'single' | 'double';
  /** Whether a `middleware: x` value names a list (`const common = [auth, audit]`) rather than one middleware. */
  namesList: (node: Node) => boolean;
}

/**
 * @hono/zod-openapi route config `{ method, path, … }` → the same with `middleware: [..., idempotency.<codeName>]`:
 * appended to an existing list (the project's own middleware, e.g. auth, stays first), a single middleware wrapped
 * into a list with ours after it. A tuple (`[auth] as const`, or the single middleware wrapped) keeps its members'
 * context types, which the route's handler sees (`c.get('user')`); ours is typed with Hono's base Env there, since
 * its own `MiddlewareHandler<any>` would turn the whole merged context into `any` or `never`. Idempotent.
 */
export function addRouteMiddleware(object: ObjectLiteralExpression, options: RouteMiddlewareOptions): RouteMiddlewareEdit {
  const { codeName, typed, quote } = options;
  if (!IDENTIFIER.test(codeName)) return { kind: 'manual', reason: `the action's code name (${JSON.stringify(codeName)}) is no identifier apply can write` };
  const wanted = `idempotency.${codeName}`;
  const isOurs = (node: Node) => unwrapExpression(node).getText() === wanted;
  const property = object.getProperty('middleware');
  if (!property) {
    // A spread (`{ ...baseRoute, path }`) may bring its own middleware, which a property of ours would replace.
    if (object.getProperties().some((p) => Node.isSpreadAssignment(p))) return { kind: 'manual', reason: `its route config spreads another object${named(object.getProperties().find((p) => Node.isSpreadAssignment(p))!)}, which may carry middleware that a middleware property of apply's would replace` };
    appendProperty(object, `middleware: [${ourMiddleware(codeName, false, quote)}]`);
    return { kind: 'edited' };
  }
  if (!Node.isPropertyAssignment(property)) return { kind: 'manual', reason: 'its route config sets middleware by shorthand or accessor, not a list apply can add to' };
  const value = property.getInitializerOrThrow();
  const tuple = constTuple(value);
  const list = tuple ?? unwrapExpression(value);
  if (Node.isArrayLiteralExpression(list)) {
    if (list.getElements().some(isOurs)) return { kind: 'wired' };
    list.addElement(ourMiddleware(codeName, typed && tuple !== undefined, quote));
    return { kind: 'edited' };
  }
  if (isOurs(value)) return { kind: 'wired' };
  if (Node.isSpreadElement(list) || options.namesList(list)) return { kind: 'manual', reason: `its route config's middleware is a shared list${named(list)}; give this route its own list with idempotency.${codeName} last` };
  // One middleware (`middleware: auth`): @hono/zod-openapi types the handler's context from it, so it becomes a tuple.
  property.setInitializer(typed ? `[${value.getText()}, ${ourMiddleware(codeName, true, quote)}] as const` : `[${value.getText()}, ${ourMiddleware(codeName, false, quote)}]`);
  return { kind: 'edited' };
}

/** Whether the config already lists `idempotency.<codeName>` (or is it). */
export function hasRouteMiddleware(object: ObjectLiteralExpression, codeName: string): boolean {
  const property = object.getProperty('middleware');
  if (!property || !Node.isPropertyAssignment(property)) return false;
  const value = property.getInitializerOrThrow();
  const list = constTuple(value) ?? unwrapExpression(value);
  const wanted = `idempotency.${codeName}`;
  return Node.isArrayLiteralExpression(list) ? list.getElements().some((e) => unwrapExpression(e).getText() === wanted) : unwrapExpression(value).getText() === wanted;
}
