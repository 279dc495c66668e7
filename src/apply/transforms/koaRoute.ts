import { Node, ts, type ArrowFunction, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration } from 'ts-morph';
import type { StoreConnection } from '../../inspect/types.js';
import { instanceImport, instancePool, instanceStore, principalComment } from '../renderInstance.js';
import { ensureNamedImport, insertArgumentAt } from '../sourceFile.js';
import { isWired, locateRoute, routeCalls } from '../locateRoute.js';
import { principalPathIn } from '../principalPath.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { keyStripeCalls } from './stripeKey.js';
import { webhookManual } from './webhookManual.js';
import { noAuthenticationStep, unauthenticated } from './expressRoute.js';

/** How the step about a handler that reads no caller id starts (planApply drops it when a followed handler reads one). */
export const READS_NO_PRINCIPAL = "the handler does not read the caller's id";

/** The frameworks whose generated middleware is one more argument of `router.post(path, …, handler)`. */
export type MiddlewareFramework = 'koa' | 'hono';

const LABEL: Record<MiddlewareFramework, string> = { koa: 'Koa', hono: 'Hono' };

/**
 * Koa (@koa/router) and Hono share the route shape `x.post('/payments', ...middleware, handler)`: the generated
 * middleware goes right before the handler (after whatever auth or validation the route already lists), imported
 * from the app's instance module. `principal` finds how the handler reads the caller's id.
 */
export function wireMiddlewareRoute(framework: MiddlewareFramework, principal: (handler: Node) => string[] | undefined): Transform {
  return (sf, target, context) => {
    const located = locateRoute(sf, target, context.anyLine);
    if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
    if (located.kind === 'unsupported') return manualOnly(target, located.reason);
    let call = located.call;
    const line = call.getStartLineNumber();
    const out: TransformOutcome = { edits: [], manual: [] };
    // A webhook is deduplicated by the provider's event id inside its handler, never by the request middleware.
    if (target.trigger === 'webhook' && !isWired(call, target.codeName)) return webhookManual(target, line);
    if (!isWired(call, target.codeName)) {
      const args = call.getArguments();
      if (args.length < 2) return manualOnly(target, `the route at line ${line} has no handler argument to put the middleware before`, line);
      if (args.some((arg) => Node.isSpreadElement(arg))) return manualOnly(target, `the route at line ${line} spreads its middleware list; put idempotency.${target.codeName} right before the handler by hand`, line);
      if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
        return manualOnly(target, `the file already has its own binding named "idempotency"; mount the generated ${LABEL[framework]} middleware by hand`, line);
      }
      // The import may have shifted the text: find the same registration again before editing it.
      const occurrence = located.occurrence ?? target.occurrence ?? 0;
      call = routeCalls(sf, target)[occurrence]!;
      insertArgumentAt(sf, call, call.getArguments().length - 1, `idempotency.${target.codeName}`);
      call = routeCalls(sf, target)[occurrence]!;
      out.edits.push({ action: target.action, file: target.file, summary: `mounts idempotency.${target.codeName} before the handler of ${target.method ?? 'POST'} ${target.path ?? ''}` });
    }
    const handler = call.getArguments()[call.getArguments().length - 1];
    const path = handler ? principal(handler) : undefined;
    if (path) out.principal = path;
    else if (target.scope !== undefined && target.scope !== 'global' && unauthenticated(target, context, false)) {
      out.manual.push({ action: target.action, file: target.file, line: target.line, reason: noAuthenticationStep(target, context, 'put your auth middleware before the route') });
    } else if (target.scope !== undefined && target.scope !== 'global') {
      // Auth in Koa and Hono is usually app-wide (app.use), invisible from the route: say what the instance assumes.
      out.manual.push({ action: target.action, file: target.file, line: target.line, reason: `${READS_NO_PRINCIPAL}, but the action's keys are scoped per ${target.scope}: check that the principal in the instance module (${framework === 'koa' ? 'ctx.state.user?.id' : "c.get('user')?.id"}) is what your authentication sets, or set "scope": "global" for it in the config` });
    }
    out.manual.push(...clientKeyStep(target));
    // The handler's first parameter is the context the middleware claimed for: idempotencyOf(ctx) / idempotencyOf(c).
    if (handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler))) {
      const keyed = keyStripeCalls(sf, handler, target, context);
      out.edits.push(...keyed.edits);
      out.manual.push(...keyed.manual);
    }
    return out;
  };
}

/** An inline handler, or the declaration a handler passed by name leads to (namedHandlers.ts). */
export const isFunctionLike = (node: Node): node is ArrowFunction | FunctionExpression | FunctionDeclaration | MethodDeclaration => Node.isArrowFunction(node) || Node.isFunctionExpression(node) || Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node);

/** Koa: the handler reads `ctx.state.user.id` (what koa-passport / koa-jwt leave); never `ctx.request.body.userId`. */
export function koaPrincipal(handler: Node): string[] | undefined {
  const path = isFunctionLike(handler) ? principalPathIn(handler) : undefined;
  return path?.[0] === 'state' ? path : undefined;
}

/** Koa + @koa/router: `router.post('/payments', auth, idempotency.createPayment, handler)`. */
export const wireKoaRoute: Transform = (sf, target: WiringTarget, context: TransformContext) => wireMiddlewareRoute('koa', koaPrincipal)(sf, target, context);

/** `{ a?: { b?: string | number } }` for the path ['a', 'b'], printed by the TS factory. */
function accessorType(path: readonly string[]): string {
  const f = ts.factory;
  let type: ts.TypeNode = f.createUnionTypeNode([f.createKeywordTypeNode(ts.SyntaxKind.StringKeyword), f.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword)]);
  for (const name of [...path].reverse()) type = f.createTypeLiteralNode([f.createPropertySignature(undefined, f.createIdentifier(name), f.createToken(ts.SyntaxKind.QuestionToken), type)]);
  return print(type).replace(/\s*\n\s*/g, ' ').replace(/;(?= })/g, '');
}

function print(node: ts.Node): string {
  return ts.createPrinter({ removeComments: true }).printNode(ts.EmitHint.Unspecified, node, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));
}

/** `(ctx as typeof ctx & AuthenticatedUser).state.user?.id`: the first step plain, the rest an optional chain. */
function accessor(param: string, path: readonly string[]): string {
  const f = ts.factory;
  let expression: ts.Expression = f.createParenthesizedExpression(
    f.createAsExpression(f.createIdentifier(param), f.createIntersectionTypeNode([f.createTypeQueryNode(f.createIdentifier(param)), f.createTypeReferenceNode('AuthenticatedUser')])),
  );
  for (const [index, name] of path.entries()) {
    expression = index === 0 ? f.createPropertyAccessExpression(expression, name) : f.createPropertyAccessChain(expression, f.createToken(ts.SyntaxKind.QuestionDotToken), f.createIdentifier(name));
  }
  return print(expression);
}

/** Where each framework's auth conventionally leaves the caller when the handlers do not say: Koa's state, Hono's variables. */
const DEFAULT_PRINCIPAL: Record<MiddlewareFramework, readonly string[]> = { koa: ['state', 'user', 'id'], hono: ['var', 'user', 'id'] };

/**
 * `<scaffold>/instance.ts` for Koa or Hono: the app's one createIdempotency(), written once and then the user's.
 * The principal reads what the handlers read (a path below `ctx` / `c`), else the framework's convention; names from
 * the code reach the text only through the TypeScript printer.
 */
export function renderMiddlewareInstance(framework: MiddlewareFramework, principalPath?: readonly string[], storeId?: string, memory = true, connection?: StoreConnection, scoped = true): string {
  const path = principalPath ?? DEFAULT_PRINCIPAL[framework];
  const param = framework === 'koa' ? 'ctx' : 'c';
  return `${instanceImport(memory)}

// Written once by \`idempotency-builder apply\`; yours to edit. Routes that apply wired import \`idempotency\` from here.
${instancePool(storeId, memory, connection)}

/** What your authentication attaches to the ${framework === 'koa' ? 'context' : "context's variables"} (as your handlers read it); adjust if it differs. */
type AuthenticatedUser = ${accessorType(path)};

export const idempotency = createIdempotency({
  pool,
${instanceStore(memory)}${principalComment(scoped)}
  principal: (${param}) => ${accessor(param, path)},
});
`;
}
