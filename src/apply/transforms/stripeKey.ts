import { Node, type ArrowFunction, type Block, type CallExpression, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration, type SourceFile, type ts } from 'ts-morph';
import { literal, providerCalls } from '../../findings/providerCalls.js';
import { ensureNamedImport, fitStatement, morphNode, spreadFirst } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import type { TransformContext, TransformOutcome } from './context.js';
import { ADYEN, keyProviderCalls } from './adyenKey.js';
import { hasHttpProviderCalls, keyHttpCalls } from './httpKey.js';
import { PAYPAL } from './paypalKey.js';
import { lineIndent } from './consumer.js';
import { stabiliseProviderCalls } from './stableParams.js';

const CONTEXT_NAME = 'idempotencyContext';
/** Fixed text (no quotes inside), so it can be printed in either quote style. */
const UNMOUNTED = 'idempotency middleware is not mounted on this route';

type Handler = ArrowFunction | FunctionExpression | MethodDeclaration | FunctionDeclaration;

const STRIPE_DEPENDENCY: ReadonlyMap<string, string> = new Map([['stripe', '*']]);

/** The Stripe calls (as the findings engine recognises them) that lie inside this handler, keyed or not. */
function callsIn(sf: SourceFile, handler: Handler): Array<{ call: CallExpression; keyed: boolean; opaque: boolean; operation: string; paramsIndex: number; noParams?: boolean }> {
  // The findings engine's matcher over the inspector's Stripe table; apply keys Stripe calls only.
  const source = { rel: sf.getFilePath(), text: sf.getFullText(), sf: sf.compilerNode, dependencies: STRIPE_DEPENDENCY };
  const found = providerCalls(source).filter((f) => f.provider === 'stripe');
  return found.flatMap((f) => {
    const call = morphNode(handler, f.call, Node.isCallExpression);
    if (!call) return [];
    // The literal itself, or a local holding it (`stripe.checkout.sessions.create(params)` after `let params = { … }`).
    let paramsIndex = f.params ? call.getArguments().findIndex((a) => a.getStart() === f.params!.getStart(sf.compilerNode) || literal(a.compilerNode as ts.Expression) === f.params) : -1;
    // A create's parameters come first whatever they are: `create(params)` after `let params; if (…) params = {…}`,
    // or none at all (`stripe.customers.create()`, which takes `{}` before the request options).
    const args = call.getArguments();
    const plainCreate = paramsIndex < 0 && /(?:^|\.)create$/.test(f.operation) && args.length <= 1 && !(args[0] && (Node.isArrowFunction(args[0]) || Node.isFunctionExpression(args[0]) || Node.isObjectLiteralExpression(args[0])));
    if (plainCreate) paramsIndex = 0;
    // Our own helper in the options (as the argument, or spread into a literal) is a key the rules cannot read.
    const ours = paramsIndex >= 0 && /\bstripeRequestOptions\(/.test(call.getArguments()[paramsIndex + 1]?.getText() ?? '');
    return [{ call, keyed: f.key !== undefined || ours, opaque: f.opaqueOptions && !ours, operation: f.operation, paramsIndex, ...(plainCreate && args.length === 0 ? { noParams: true } : {}) }];
  });
}

/**
 * `const idempotencyContext = idempotencyOf(req);` plus a guard, as the handler's first statements (once): the
 * provider key needs the claim, and a route that lost its middleware must fail rather than charge without a key.
 * Only the import is added here; the statements go in at the end (`insertContext`), as raw text indented like the
 * statement they precede: ts-morph's own insertion indents a try block one level short.
 */
function ensureContext(handler: Handler, context: TransformContext, sf: SourceFile, pending: { block?: Block }): boolean {
  const body = handler.getBody();
  if (!body || !Node.isBlock(body)) return false;
  // A handler that wraps its body in try/catch (to call next(error)) gets the guard inside, so it reaches its catch.
  const first = body.getStatements()[0];
  const block = first && Node.isTryStatement(first) ? first.getTryBlock() : body;
  if (block.getVariableStatement(CONTEXT_NAME) || pending.block) return true;
  if (!ensureNamedImport(sf, context.style.specifier('index'), 'idempotencyOf')) return false;
  pending.block = block;
  return true;
}

/** Writes the statements ensureContext planned (`accessor` reads the context), before the block's first statement and at its indentation. */
function insertContext(block: Block, accessor: string, context: TransformContext, sf: SourceFile): void {
  const lines = [fitStatement(sf, `const ${CONTEXT_NAME} = ${accessor};`), fitStatement(sf, `if (!${CONTEXT_NAME}) throw new Error(${context.style.quote === 'double' ? JSON.stringify(UNMOUNTED) : `'${UNMOUNTED}'`});`)];
  const first = block.getStatements()[0];
  if (!first) {
    block.insertStatements(0, lines);
    return;
  }
  const indent = lineIndent(first);
  // Raw text: forgets the file's wrapped nodes, so this is the last edit of keyStripeCalls.
  sf.insertText(first.getStart(), lines.map((line) => `${line}\n${indent}`).join(''));
}

/**
 * The handler's `const idempotencyContext = <accessor>;` and its guard, added once (true when they are there after).
 * Writes raw text, which forgets the file's wrapped nodes: the caller's last edit of the file.
 */
export function ensureHandlerContext(sf: SourceFile, handler: Handler, accessor: string, context: TransformContext): boolean {
  const pending: { block?: Block } = {};
  if (!ensureContext(handler, context, sf, pending)) return false;
  if (pending.block) insertContext(pending.block, accessor, context, sf);
  return true;
}

export { CONTEXT_NAME };

/** `idempotencyOf(<first parameter>)`: how a handler that takes the request (Express req, Koa ctx, Hono c) reads its claim. */
export function requestAccessor(handler: Handler): string | undefined {
  const requestNode = handler.getParameters()[0]?.getNameNode();
  return requestNode && Node.isIdentifier(requestNode) ? `idempotencyOf(${requestNode.getText()})` : undefined;
}

/**
 * The provider keying of a protected handler, the same for every framework apply wires: per-attempt keys and labels
 * become derived ones (stableParams.ts), and Stripe / Adyen / PayPal calls without a key get the key derived from
 * (scope, key, action, step), so a re-executed handler sends the same key. Only `accessor` differs per framework:
 * the expression that reads the handler's idempotency context (`idempotencyOf(req)`, `idempotencyOf(ctx)`,
 * `idempotencyOf()` where the claim runs in the async call chain), or undefined when the handler cannot reach it.
 */
export function keyHandlerCalls(sf: SourceFile, handler: Handler, target: WiringTarget, context: TransformContext, accessor: string | undefined): TransformOutcome {
  const out: TransformOutcome = { edits: [], manual: [] };
  const pending: { block?: Block } = {};
  keyCalls(sf, handler, target, context, out, pending, accessor);
  if (pending.block && accessor !== undefined) insertContext(pending.block, accessor, context, sf);
  return out;
}

/** keyHandlerCalls for a handler whose first parameter is the request (Express, Fastify, Koa, Hono). */
export const keyStripeCalls = (sf: SourceFile, handler: Handler, target: WiringTarget, context: TransformContext): TransformOutcome => keyHandlerCalls(sf, handler, target, context, requestAccessor(handler));

function keyCalls(sf: SourceFile, handler: Handler, target: WiringTarget, context: TransformContext, out: TransformOutcome, pending: { block?: Block }, accessor: string | undefined): void {
  const contextName = () => (accessor !== undefined && ensureContext(handler, context, sf, pending) ? CONTEXT_NAME : undefined);
  // First the keys and labels that change per attempt become derived ones: the keying below then sees those calls keyed.
  // What it leaves (a business time) is listed by planApply from the findings re-run on the edited text.
  const stable = stabiliseProviderCalls(sf, handler, target, context, contextName);
  out.edits.push(...stable.edits);
  out.manual.push(...stable.manual);
  const keying = target.provider === 'adyen' ? ADYEN : target.provider === 'paypal' ? PAYPAL : undefined;
  if (keying) {
    const other = keyProviderCalls(sf, handler, target, context, keying, contextName, hasHttpProviderCalls(sf, handler, keying.provider));
    out.edits.push(...other.edits);
    out.manual.push(...other.manual);
  }
  keyStripeSdkCalls(sf, handler, target, context, out, pending, accessor);
  // Raw-HTTP calls last: their steps continue after the SDK calls', and the SDK edits above are already in place.
  const http = keyHttpCalls(sf, handler, target, context, contextName);
  out.edits.push(...http.edits);
  out.manual.push(...http.manual);
}

function keyStripeSdkCalls(sf: SourceFile, handler: Handler, target: WiringTarget, context: TransformContext, out: TransformOutcome, pending: { block?: Block }, accessor: string | undefined): void {
  const calls = callsIn(sf, handler);
  const open = calls.filter((c) => !c.keyed);
  if (target.provider === 'stripe' && calls.length === 0 && !hasHttpProviderCalls(sf, handler, 'stripe')) {
    // Where the claim runs in the async call chain, the code making the call reads it itself; elsewhere it is passed down.
    const how = accessor === 'idempotencyOf()' ? 'read idempotencyOf() where it is made (undefined outside a protected route)' : 'pass idempotencyOf(request) down to it';
    out.manual.push({ action: target.action, file: target.file, line: handler.getStartLineNumber(), reason: `the Stripe call is not made inside the route handler: ${how} and add stripeRequestOptions(context) from providers.ts as its request options` });
  }
  if (open.length === 0) return;
  const usable = accessor !== undefined && context.scaffoldModules.has('providers');
  for (const item of open) {
    const line = item.call.getStartLineNumber();
    // A call without parameters (`stripe.customers.create()`) gets `{}` in front of its options, once they can go in.
    const bare = item.noParams === true && usable && !item.opaque;
    const args = item.call.getArguments();
    const optionsArg = args[item.paramsIndex + 1];
    // stripe-node's callback form takes the request options between the parameters and the callback.
    const callback = args.length === item.paramsIndex + 2 && optionsArg !== undefined && (Node.isArrowFunction(optionsArg) || Node.isFunctionExpression(optionsArg));
    const placeable = bare || (item.paramsIndex >= 0 && (args.length === item.paramsIndex + 1 || callback || (args.length === item.paramsIndex + 2 && Node.isObjectLiteralExpression(optionsArg))));
    if (item.opaque || !usable || !placeable) {
      const why = item.opaque ? 'its request options are not an object literal' : !usable ? 'the handler cannot reach its idempotency context (no named request parameter) or the scaffold has no providers.ts' : item.paramsIndex < 0 ? 'its parameters are not an object literal' : 'its arguments after the parameters are neither request options nor a callback';
      out.manual.push({ action: target.action, file: target.file, line, reason: `stripe.${item.operation} needs stripeRequestOptions(idempotencyOf(request)) as request options; not edited because ${why}` });
      continue;
    }
    if (!ensureContext(handler, context, sf, pending) || !ensureNamedImport(sf, context.style.specifier('providers'), 'stripeRequestOptions')) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `stripe.${item.operation} needs stripeRequestOptions(idempotencyOf(request)); the handler body is an expression or a name is taken` });
      continue;
    }
    // Two Stripe calls in one handler must not share a key (Stripe refuses a key reused with other parameters): each
    // gets its position among the handler's Stripe calls as the step, as stabiliseProviderCalls numbers a replaced key.
    const step = calls.length > 1 ? `, ${calls.indexOf(item)}` : '';
    const options = `stripeRequestOptions(${CONTEXT_NAME}${step})`;
    if (bare) item.call.addArgument('{}');
    if (optionsArg && Node.isObjectLiteralExpression(optionsArg)) {
      spreadFirst(optionsArg, options);
    } else if (callback) {
      item.call.insertArgument(item.paramsIndex + 1, options);
    } else {
      item.call.addArgument(options);
    }
    out.edits.push({ action: target.action, file: target.file, summary: `passes the derived Stripe idempotency key to stripe.${item.operation} (line ${line})` });
  }
}
