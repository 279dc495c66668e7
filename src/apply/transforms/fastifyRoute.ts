import { Node, SyntaxKind, type CallExpression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { ensureNamedImport, insertArgumentAt, spreadFirst } from '../sourceFile.js';
import { isWired, locateRoute, routeCalls, samePath } from '../locateRoute.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { noAuthenticationStep, unauthenticated } from './expressRoute.js';
import { keyStripeCalls } from './stripeKey.js';
import { principalPathIn } from '../principalPath.js';
import { webhookManual } from './webhookManual.js';

/** Hooks the generated route options set; a route that sets one of them gets ours beside its own (mergeHooks). */
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
    const own = options && Node.isObjectLiteralExpression(options) ? ownHooks(options) : undefined;
    if (own && 'manual' in own) return manualOnly(target, manualMerge(target.codeName, own.manual), line);
    if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return manualOnly(target, 'the file already has its own binding named "idempotency"; pass the generated route options by hand', line);
    }
    call = routeCalls(sf, target)[located.occurrence ?? 0]!;
    const routeOptions = call.getArguments().length === 3 ? call.getArguments()[1] : undefined;
    if (own && own.hooks.length > 0 && routeOptions && Node.isObjectLiteralExpression(routeOptions)) mergeHooks(routeOptions, target.codeName);
    else if (routeOptions && Node.isObjectLiteralExpression(routeOptions)) spreadFirst(routeOptions, `idempotency.${target.codeName}`);
    else insertArgumentAt(sf, call, 1, `idempotency.${target.codeName}`);
    call = routeCalls(sf, target)[located.occurrence ?? 0]!;
    out.edits.push({ action: target.action, file: target.file, summary: `adds the idempotency.${target.codeName} hooks to ${target.method ?? 'POST'} ${target.path ?? ''}` });
  }
  out.manual.push(...clientKeyStep(target));
  const handler = call.getArguments()[call.getArguments().length - 1];
  const inline = handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler)) ? handler : undefined;
  out.manual.push(...fastifyUnauthenticated(target, context, inline ? principalPathIn(inline) : undefined));
  if (handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler))) {
    const principal = principalPathIn(handler);
    if (principal) out.principal = principal;
    const keyed = keyStripeCalls(sf, handler, target, context);
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
  }
  return out;
};

/**
 * A route whose keys are scoped to a caller though nothing authenticates it (no onRequest/preHandler hook on it, on
 * its plugin or where the plugin is registered, as the inspection read it) and whose handler reads no user.
 */
function fastifyUnauthenticated(target: WiringTarget, context: TransformContext, principal: string[] | undefined): TransformOutcome['manual'] {
  if (principal || target.scope === undefined || target.scope === 'global' || !unauthenticated(target, context, false)) return [];
  return [{ action: target.action, file: target.file, line: target.line, reason: noAuthenticationStep(target, context, "authenticate the route first (an onRequest hook such as fastify.authenticate, on the route or its plugin)") }];
}

/**
 * The route's own preHandler/onSend, when each can take the generated hook beside it: an array literal, or one
 * function written in place. Anything else (a name that may hold an array, a method, a shorthand) is left to a person.
 */
function ownHooks(options: ObjectLiteralExpression): { hooks: string[] } | { manual: string } {
  const hooks: string[] = [];
  for (const p of options.getProperties()) {
    if (!(Node.isPropertyAssignment(p) || Node.isMethodDeclaration(p) || Node.isShorthandPropertyAssignment(p)) || !HOOKS.includes(p.getName())) continue;
    const value = Node.isPropertyAssignment(p) ? p.getInitializer() : undefined;
    if (!value || !(Node.isArrayLiteralExpression(value) || Node.isArrowFunction(value) || Node.isFunctionExpression(value))) return { manual: p.getName() };
    if (Node.isArrayLiteralExpression(value) && value.getElements().some((e) => Node.isSpreadElement(e))) return { manual: p.getName() };
    hooks.push(p.getName());
  }
  return { hooks };
}

function manualMerge(codeName: string, hook: string): string {
  return `the route sets its own ${hook} as an expression apply cannot extend safely; put the generated hooks after yours: { preHandler: [yours, idempotency.${codeName}.preHandler], onSend: [yours, idempotency.${codeName}.onSend] }`;
}

/**
 * The generated hooks beside the route's own: each after the route's (its preHandler runs after authentication, so
 * the principal is known; its onSend stores the payload as the route's own hooks left it), a hook the route does not
 * set added as a property.
 */
function mergeHooks(options: ObjectLiteralExpression, codeName: string): void {
  // Edits as text inside the object, so its layout stays the author's: one line stays one line.
  const base = options.getStart();
  const text = options.getText();
  const edits: Array<{ at: number; insert: string; end?: number }> = [];
  const missing: string[] = [];
  for (const hook of HOOKS) {
    const ours = `idempotency.${codeName}.${hook}`;
    const property = options.getProperty(hook);
    const value = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
    if (!value) missing.push(`${hook}: ${ours}`);
    else if (Node.isArrayLiteralExpression(value)) {
      const last = value.getElements().at(-1);
      edits.push(last ? { at: last.getEnd() - base, insert: `, ${ours}` } : { at: value.getEnd() - 1 - base, insert: ours });
    } else edits.push({ at: value.getStart() - base, end: value.getEnd() - base, insert: `[${value.getText()}, ${ours}]` });
  }
  const last = options.getProperties().at(-1);
  if (missing.length > 0 && last) {
    const multiline = options.getStartLineNumber() !== options.getEndLineNumber();
    const indent = multiline ? /[ \t]*$/.exec(text.slice(0, last.getStart() - base))?.[0] ?? '' : '';
    edits.push({ at: last.getEnd() - base, insert: missing.map((entry) => (multiline ? `,\n${indent}${entry}` : `, ${entry}`)).join('') });
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, edit.at) + edit.insert + out.slice(edit.end ?? edit.at);
  options.getSourceFile().replaceText([options.getStart(), options.getEnd()], out);
}

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
    const own = ownHooks(call.getArguments()[0] as ObjectLiteralExpression);
    if ('manual' in own) return manualOnly(target, manualMerge(target.codeName, own.manual), line);
    if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return manualOnly(target, 'the file already has its own binding named "idempotency"; spread the generated route options by hand', line);
    }
    call = routeOptionCalls(sf, target)[index]!;
    const options = call.getArguments()[0] as ObjectLiteralExpression;
    if (own.hooks.length > 0) mergeHooks(options, target.codeName);
    else spreadFirst(options, `idempotency.${target.codeName}`);
    call = routeOptionCalls(sf, target)[index]!;
    out.edits.push({ action: target.action, file: target.file, summary: `adds the idempotency.${target.codeName} hooks to the .route() options of ${route}` });
  }
  out.manual.push(...clientKeyStep(target));
  const handler = inlineHandler(call.getArguments()[0] as ObjectLiteralExpression);
  out.manual.push(...fastifyUnauthenticated(target, context, handler ? principalPathIn(handler) : undefined));
  if (handler) {
    const principal = principalPathIn(handler);
    if (principal) out.principal = principal;
    const keyed = keyStripeCalls(sf, handler, target, context);
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
  }
  return out;
}
