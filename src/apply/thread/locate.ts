import { Node, type CallExpression, type SourceFile, type ts } from 'ts-morph';
import { registeredHandler } from '../../findings/actionFacts.js';
import type { SourceContext } from '../../findings/types.js';
import type { Handler } from '../followHandler.js';
import { importStyleFor, type ProjectImports } from '../importStyle.js';
import { isWired, routeCalls } from '../locateRoute.js';
import { morphNode, parseSource } from '../sourceFile.js';
import { hasMark, locateNestMethod, requestParameter } from '../transforms/nestjsRoute.js';
import { nextKindOf, wrappedFunction } from '../transforms/nextRoute.js';
import { requestAccessor } from '../transforms/stripeKey.js';
import type { WiringTarget } from '../types.js';
import { AMBIENT_ACCESSOR, type Sources } from './chains.js';
import { otherUses } from './refusals.js';

export const isFunctionNode = (n: Node): n is Handler => Node.isMethodDeclaration(n) || Node.isFunctionDeclaration(n) || Node.isArrowFunction(n) || Node.isFunctionExpression(n);

/** A protected handler: its ts-morph node, the same function in the findings' tree, and how it reads its claim. */
export interface LocatedHandler {
  handler: Handler;
  fn: ts.FunctionLikeDeclaration;
  source: SourceContext;
  accessor?: string;
  /** A NestJS method without a request parameter: it gains `@Req() request` (when the claim is threaded down). */
  addRequest?: boolean;
  /**
   * The claim reaches every function the handler calls without being passed (NestJS: the interceptor runs the route
   * in an AsyncLocalStorage), so the function making a provider call reads it itself with idempotencyOf().
   */
  ambient?: boolean;
}

/**
 * The protected handler of a wired route. `sf` is the route file's current text parsed by ts-morph, and
 * `routeSource` the findings' view of that very parse, so the handler's compiler node is the one the chains start from.
 */
export function locateHandler(ctx: Sources, routeSource: SourceContext, sf: SourceFile, target: WiringTarget, framework: string, style: { scaffoldDir: string; imports: ProjectImports }): LocatedHandler | undefined {
  const wired = wiredHandler(sf, target, framework);
  if (!wired) return undefined;
  if ('route' in wired) return namedHandler(ctx, routeSource, wired.route, style);
  return { ...wired, fn: wired.handler.compilerNode, source: routeSource };
}

/** The protected handler of a wired route in the route file's current text, and how it reads its claim. */
function wiredHandler(sf: SourceFile, target: WiringTarget, framework: string): { handler: Handler; accessor?: string; addRequest?: boolean; ambient?: boolean } | { route: CallExpression } | undefined {
  if (framework === 'nestjs') {
    const method = locateNestMethod(sf, target, true)?.method;
    if (!method || !hasMark(method, target.codeName)) return undefined;
    const request = requestParameter(method);
    return request ? { handler: method, accessor: `idempotencyOf(${request})`, ambient: true } : { handler: method, accessor: 'idempotencyOf(request)', addRequest: true, ambient: true };
  }
  if (framework === 'nextjs') {
    // The wrappers run the route handler, Pages API route or Server Action in an AsyncLocalStorage, as Nest's
    // interceptor does: a Pages route's `handlePOST(req, res)` reads the claim where it makes the provider call.
    const kind = nextKindOf(target.file, sf.getFullText());
    const fn = kind ? wrappedFunction(sf, target, kind) : undefined;
    return fn ? { handler: fn, accessor: AMBIENT_ACCESSOR, ambient: true } : undefined;
  }
  const wired = routeCalls(sf, target).filter((call) => isWired(call, target.codeName));
  if (wired.length !== 1) return undefined;
  const args = wired[0]!.getArguments();
  let last = args[args.length - 1];
  if (last && Node.isObjectLiteralExpression(last)) {
    const property = last.getProperty('handler');
    last = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  }
  if (!last) return undefined;
  // Passed by name (`router.post('/orders', idempotency.createOrder, orders.create)`): followed in the project.
  if (!(Node.isArrowFunction(last) || Node.isFunctionExpression(last))) return { route: wired[0]! };
  const accessor = requestAccessor(last);
  return accessor ? { handler: last, accessor } : { handler: last };
}

/**
 * The handler a wired route passes by name, where the findings walk finds it (registeredHandler), as a ts-morph node
 * of its file's current text. Undefined when it is not found, or when anything else uses it: its new guard would
 * throw for another route, which keyNamedHandlers already lists.
 */
function namedHandler(ctx: Sources, routeSource: SourceContext, route: CallExpression, input: { scaffoldDir: string; imports: ProjectImports }): LocatedHandler | undefined {
  const call = route.compilerNode;
  const registered = registeredHandler(ctx, routeSource, call);
  if (!registered) return undefined;
  const uses = otherUses(ctx, { call, callSource: routeSource, fn: registered.fn, source: registered.source }, call);
  if (uses.callers.length > 0 || uses.values.length > 0) return undefined;
  const style = importStyleFor(registered.source.rel, registered.source.text, input.scaffoldDir, input.imports);
  const handler = morphNode(parseSource(registered.source.rel, registered.source.text, style), registered.fn, isFunctionNode);
  if (!handler) return undefined;
  const accessor = requestAccessor(handler);
  return { handler, fn: registered.fn, source: registered.source, ...(accessor ? { accessor } : {}) };
}
