import { Node, SyntaxKind, type CallExpression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { ensureNamedImport, insertArgumentAt, spreadFirst } from '../sourceFile.js';
import { isWired, locateRoute, routeCalls, samePath } from '../locateRoute.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type Transform, type TransformOutcome } from './context.js';
import { keyStripeCalls } from './stripeKey.js';
import { principalPathIn } from '../principalPath.js';
import { webhookManual } from './webhookManual.js';

/** Hooks the generated route options set; a route that already sets one of them needs a hand-made merge. */
const HOOKS = ['preHandler', 'onSend'];

/**
 * Fastify: the generated preHandler/onSend pair are the route's options, `app.post(url, idempotency.name, handler)`;
 * a route that already has an options object gets them spread into it (`{ ...idempotency.name, schema }`).
 */
export const wireFastifyRoute: Transform = (sf, target, context) => {
  if (routeOptionCalls(sf, target).length > 0) return wireRouteOptions(sf, target, context);
  const located = locateRoute(sf, target, context.anyLine);
  if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
  if (located.kind === 'unsupported') return manualOnly(target, located.reason);
  let call = located.call;
  const line = call.getStartLineNumber();
  if (target.trigger === 'webhook') return webhookManual(target, line);
  const out: TransformOutcome = { edits: [], manual: [] };
  if (!isWired(call, target.codeName)) {
    const args = call.getArguments();
    const options = args.length === 3 ? args[1] : undefined;
    if (args.length !== 2 && !(options && Node.isObjectLiteralExpression(options))) {
      return manualOnly(target, `the route at line ${line} passes its options as an expression; add the hooks of idempotency.${target.codeName} to them by hand`, line);
    }
    if (options && Node.isObjectLiteralExpression(options) && options.getProperties().some((p) => (Node.isPropertyAssignment(p) || Node.isMethodDeclaration(p) || Node.isShorthandPropertyAssignment(p)) && HOOKS.includes(p.getName()))) {
      return manualOnly(target, `the route already sets preHandler/onSend; run yours first: { preHandler: [yours, idempotency.${target.codeName}.preHandler], onSend: idempotency.${target.codeName}.onSend }`, line);
    }
    if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return manualOnly(target, 'the file already has its own binding named "idempotency"; pass the generated route options by hand', line);
    }
    if (options && Node.isObjectLiteralExpression(options)) spreadFirst(options, `idempotency.${target.codeName}`);
    else insertArgumentAt(sf, call, 1, `idempotency.${target.codeName}`);
    call = routeCalls(sf, target)[located.occurrence ?? 0]!;
    out.edits.push({ action: target.action, file: target.file, summary: `adds the idempotency.${target.codeName} hooks to ${target.method ?? 'POST'} ${target.path ?? ''}` });
  }
  out.manual.push(...clientKeyStep(target));
  const handler = call.getArguments()[call.getArguments().length - 1];
  if (handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler))) {
    const principal = principalPathIn(handler);
    if (principal) out.principal = principal;
    const keyed = keyStripeCalls(sf, handler, target, context);
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
  }
  return out;
};

/** A string literal property of an object literal (`method: 'POST'`), or the strings of an array literal. */
function literalValues(object: ObjectLiteralExpression, name: string): string[] | undefined {
  const property = object.getProperty(name);
  if (!property || !Node.isPropertyAssignment(property)) return undefined;
  const value = property.getInitializer();
  const strings = (node: Node | undefined) => (node && (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) ? [node.getLiteralValue()] : undefined);
  if (value && Node.isArrayLiteralExpression(value)) {
    const items = value.getElements().map(strings);
    return items.every((item) => item !== undefined) ? items.flat() : undefined;
  }
  return strings(value);
}

/** `app.route({ method: 'POST', url: '/bookings', handler })` / `fastify.route(...)` registrations of the target, in source order. */
function routeOptionCalls(sf: SourceFile, target: WiringTarget): CallExpression[] {
  const method = (target.method ?? 'POST').toUpperCase();
  return sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((call) => {
    const callee = call.getExpression();
    const options = call.getArguments()[0];
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'route' || call.getArguments().length !== 1 || !options || !Node.isObjectLiteralExpression(options)) return false;
    const methods = literalValues(options, 'method');
    const url = literalValues(options, 'url') ?? literalValues(options, 'path');
    return methods !== undefined && methods.some((m) => m.toUpperCase() === method) && url?.length === 1 && target.path !== undefined && samePath(url[0]!, target.path);
  });
}

/** The handler of a route-options object, when it is written inline (`handler: async (request, reply) => ...`). */
function inlineHandler(options: ObjectLiteralExpression) {
  const property = options.getProperty('handler');
  const value = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  return value && (Node.isArrowFunction(value) || Node.isFunctionExpression(value)) ? value : undefined;
}

/**
 * The full declaration form: the generated hooks are spread first into the route's own options object
 * (`app.route({ ...idempotency.createBooking, method: 'POST', url: '/bookings', handler })`).
 */
function wireRouteOptions(sf: SourceFile, target: WiringTarget, context: Parameters<Transform>[2]): TransformOutcome {
  const calls = routeOptionCalls(sf, target);
  const spans = (call: CallExpression) => call.getStartLineNumber() <= target.line && target.line <= call.getEndLineNumber();
  let index = target.occurrence !== undefined && calls[target.occurrence] ? target.occurrence : calls.findIndex(spans);
  if (index < 0 && calls.length === 1 && (context.anyLine || isWired(calls[0]!, target.codeName))) index = 0;
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
  if (index < 0) return { edits: [], manual: [], stale: `${target.file} changed since inspection: ${route} is declared with .route() at line ${calls.map((c) => c.getStartLineNumber()).join(', ')}, not ${target.line}` };
  let call = calls[index]!;
  const line = call.getStartLineNumber();
  if (target.trigger === 'webhook') return webhookManual(target, line);
  const out: TransformOutcome = { edits: [], manual: [] };
  if (!isWired(call, target.codeName)) {
    const options = call.getArguments()[0] as ObjectLiteralExpression;
    if (options.getProperties().some((p) => (Node.isPropertyAssignment(p) || Node.isMethodDeclaration(p) || Node.isShorthandPropertyAssignment(p)) && HOOKS.includes(p.getName()))) {
      return manualOnly(target, `the route already sets preHandler/onSend; run yours first: { preHandler: [yours, idempotency.${target.codeName}.preHandler], onSend: idempotency.${target.codeName}.onSend }`, line);
    }
    if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return manualOnly(target, 'the file already has its own binding named "idempotency"; spread the generated route options by hand', line);
    }
    call = routeOptionCalls(sf, target)[index]!;
    spreadFirst(call.getArguments()[0] as ObjectLiteralExpression, `idempotency.${target.codeName}`);
    call = routeOptionCalls(sf, target)[index]!;
    out.edits.push({ action: target.action, file: target.file, summary: `adds the idempotency.${target.codeName} hooks to the .route() options of ${route}` });
  }
  out.manual.push(...clientKeyStep(target));
  const handler = inlineHandler(call.getArguments()[0] as ObjectLiteralExpression);
  if (handler) {
    const principal = principalPathIn(handler);
    if (principal) out.principal = principal;
    const keyed = keyStripeCalls(sf, handler, target, context);
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
  }
  return out;
}
