import { Node, SyntaxKind, type CallExpression, type SourceFile } from 'ts-morph';
import { locateOpenApi, openApiCalls } from './openApiConfig.js';
import type { WiringTarget } from './types.js';

/** How the route pass's step for a @hono/zod-openapi registration reads; the project pass supersedes it when it wires the config. */
export const OPENAPI_ROUTE = "is registered with @hono/zod-openapi's .openapi(…)";

export type Located =
  | { kind: 'found'; call: CallExpression; occurrence?: number }
  | { kind: 'stale'; reason: string }
  | { kind: 'unsupported'; reason: string };

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'all']);

/** `'/payments'` or `` `/payments` `` as the route's first argument; after the name in @koa/router's `router.post('pay', '/payments', …)`. */
function pathLiteral(call: CallExpression): string | undefined {
  const [first, second] = call.getArguments().map((arg) => (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg) ? arg.getLiteralValue() : undefined));
  return first !== undefined && second?.startsWith('/') ? second : first;
}

/**
 * The path of a method call on Express's route chain, `router.route('/').post(protect, addOrderItems).get(…)`: the
 * `.route()` call's literal, found through the chain's other method calls. Undefined for any other call.
 */
export function chainedRoutePath(call: CallExpression): string | undefined {
  const first = call.getArguments()[0];
  if (first && (Node.isStringLiteral(first) || Node.isNoSubstitutionTemplateLiteral(first))) return undefined;
  let receiver = call.getExpression();
  while (Node.isPropertyAccessExpression(receiver)) {
    const inner = receiver.getExpression();
    if (!Node.isCallExpression(inner)) return undefined;
    const callee = inner.getExpression();
    if (!Node.isPropertyAccessExpression(callee)) return undefined;
    if (callee.getName() === 'route') {
      const [path, more] = inner.getArguments();
      return more === undefined && path && (Node.isStringLiteral(path) || Node.isNoSubstitutionTemplateLiteral(path)) ? path.getLiteralValue() : undefined;
    }
    if (!METHODS.has(callee.getName())) return undefined;
    receiver = callee;
  }
  return undefined;
}

/** The path a registration call registers: its own first argument, or its route chain's. */
const registeredPath = (call: CallExpression) => pathLiteral(call) ?? chainedRoutePath(call);

/** A router mounted under a prefix registers the tail of the full path: `/` or `/:id/refunds` under `/payments`. */
export function samePath(registered: string, full: string): boolean {
  const trim = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
  const a = trim(registered);
  const b = trim(full);
  return a === b || (a === '/' ? b.length > 0 : b.endsWith(a));
}

/** `app.post('/x', …)` / `router.post(...)` calls for the target's method and path, in source order. */
export function routeCalls(sf: SourceFile, target: WiringTarget): CallExpression[] {
  const method = (target.method ?? 'POST').toLowerCase();
  const matches = sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((call) => {
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || !METHODS.has(callee.getName()) || (callee.getName() !== method && callee.getName() !== 'all')) return false;
    const registered = registeredPath(call);
    return registered !== undefined && target.path !== undefined && samePath(registered, target.path);
  });
  // Under an unknown mount prefix `/` matches every path: only the most specific registrations count.
  const longest = Math.max(0, ...matches.map((call) => registeredPath(call)!.replace(/\/+$/, '').length));
  return matches.filter((call) => registeredPath(call)!.replace(/\/+$/, '').length === longest);
}

/**
 * The route registration the action's `source` points at. A call is accepted when its lines span the recorded
 * line; the same route elsewhere in the file means the file moved on since inspection (`stale`), unless `anyLine`
 * (the file is byte-for-byte what the last apply wrote, so its own import lines explain the shift).
 */
export function locateRoute(sf: SourceFile, target: WiringTarget, anyLine: boolean): Located {
  const calls = routeCalls(sf, target);
  if (target.occurrence !== undefined && calls[target.occurrence]) return { kind: 'found', call: calls[target.occurrence]! };
  const spans = (call: CallExpression) => call.getStartLineNumber() <= target.line && target.line <= call.getEndLineNumber();
  // Exact spans first (innermost wins when chained), then the unique route when the line is not binding.
  const here = calls.filter(spans).sort((a, b) => b.getStart() - a.getStart())[0];
  if (here) return { kind: 'found', call: here, occurrence: calls.indexOf(here) };
  if ((anyLine || calls.some((call) => isWired(call, target.codeName))) && calls.length === 1) return { kind: 'found', call: calls[0]!, occurrence: 0 };
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
  if (calls.length > 0) {
    return { kind: 'stale', reason: `${target.file} changed since inspection: ${route} is registered at line ${calls.map((c) => c.getStartLineNumber()).join(', ')}, not ${target.line}` };
  }
  const chained = sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => {
    const callee = call.getExpression();
    return Node.isPropertyAccessExpression(callee) && callee.getName() === 'route' && call.getStartLineNumber() <= target.line && target.line <= call.getParentOrThrow().getEndLineNumber();
  });
  if (chained) return { kind: 'unsupported', reason: `${route} is declared through a chained .route(...) at line ${target.line}; add idempotency.${target.codeName} before its handler by hand` };
  // @hono/zod-openapi: `router.openapi(routes.create, handler)` takes no middleware argument; its route config does,
  // which the project pass (openApiRoutes.ts) edits where it is declared. This step stands until that pass wires it.
  const openapi = locateOpenApi(sf, target, anyLine, samePath);
  // A config declared in another file is matched by its method and path there, by the project pass alone.
  if (!openapi && anyLine && openApiCalls(sf).length > 0) {
    return { kind: 'unsupported', reason: `${route} ${OPENAPI_ROUTE} in ${target.file}, which takes no middleware argument; add \`middleware: [idempotency.${target.codeName}]\` to its createRoute config by hand` };
  }
  if (openapi) {
    const config = openapi.getArguments()[0];
    const named = config && (Node.isIdentifier(config) || Node.isPropertyAccessExpression(config)) && /^[\w$.]{1,80}$/.test(config.getText()) ? ` (${config.getText()})` : '';
    return { kind: 'unsupported', reason: `${route} ${OPENAPI_ROUTE} at line ${openapi.getExpression().getEndLineNumber()}, which takes no middleware argument; add \`middleware: [idempotency.${target.codeName}]\` to its createRoute config${named} by hand` };
  }
  return { kind: 'stale', reason: `${target.file} changed since inspection: no ${route} registration found (expected at line ${target.line})` };
}

/** Whether `idempotency.<codeName>` is already an argument (or spread into the route options). */
export function isWired(call: CallExpression, codeName: string): boolean {
  const wanted = `idempotency.${codeName}`;
  // Spread into the options, or (Fastify, beside the route's own hooks) `preHandler: [auth, idempotency.x.preHandler]`.
  const merged = new RegExp(`\\b${wanted.replace(/[.$]/g, '\\$&')}\\.preHandler\\b`);
  return call.getArguments().some((arg) => arg.getText() === wanted || (Node.isObjectLiteralExpression(arg) && (arg.getProperties().some((p) => Node.isSpreadAssignment(p) && p.getExpression().getText() === wanted) || merged.test(arg.getText()))));
}
