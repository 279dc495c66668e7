import { Node, type CallExpression } from 'ts-morph';
import { ensureNamedImport, insertArgumentAt } from '../sourceFile.js';
import { chainedRoutePath, isWired, locateRoute, routeCalls } from '../locateRoute.js';
import { clientKeyStep, manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { LOOKED_FOR_AUTHENTICATION } from '../routeAuthentication.js';
import type { WiringTarget } from '../types.js';
import { keyStripeCalls } from './stripeKey.js';
import { principalPathIn } from '../principalPath.js';
import { webhookManual } from './webhookManual.js';

/** How the step about a route with nothing authenticating it starts (planApply drops it when a followed handler reads the user). */
export const NO_AUTHENTICATION = 'the route has no authentication before the handler';

/**
 * Whether nothing authenticates the target's route, as the inspection read it (routeAuthentication.ts). Without that
 * reading (a transform run on one file), `alone` answers: what the route's own arguments say.
 */
export function unauthenticated(target: WiringTarget, context: TransformContext, alone: boolean): boolean {
  if (!context.routeAuthentication) return alone;
  return context.routeAuthentication(target)?.by.length === 0;
}

/** The step for a route nothing authenticates whose keys are scoped to a caller. */
export function noAuthenticationStep(target: WiringTarget, context: TransformContext, fix: string): string {
  const where = context.routeAuthentication ? ` (${LOOKED_FOR_AUTHENTICATION})` : '';
  return `${NO_AUTHENTICATION}${where}, but the action's keys are scoped per ${target.scope ?? 'user'}: set "scope": "global" for it in the config (and regenerate), or ${fix}`;
}

/** `express.raw()` / `raw(...)` before the handler: the body is bytes for signature checks, not the parsed event. */
const rawBody = (call: CallExpression) => call.getArguments().some((arg) => /(^|\.)raw\s*\(/.test(arg.getText()));

/**
 * Express: the generated middleware goes right before the handler (after auth and body parsing the route already
 * lists), imported from the app's instance module: `router.post('/payments', auth, idempotency.createPayment, h)`.
 */
export const wireExpressRoute: Transform = (sf, target, context) => {
  const located = locateRoute(sf, target, context.anyLine);
  if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
  if (located.kind === 'unsupported') return manualOnly(target, located.reason);
  let call = located.call;
  const line = call.getStartLineNumber();
  const out: TransformOutcome = { edits: [], manual: [] };
  if (!isWired(call, target.codeName)) {
    if (target.trigger === 'webhook' && rawBody(call)) {
      return manualOnly(target, `the webhook reads a raw body (for its signature check), so the middleware cannot see the event id; claim the event id inside the handler after verifying it (core.begin with the derived key)`, line);
    }
    if (target.trigger === 'webhook') return webhookManual(target, line);
    const args = call.getArguments();
    const handler = args[args.length - 1];
    // `router.route('/').post(protect, handler)` has no path argument of its own.
    if (args.length < (chainedRoutePath(call) === undefined ? 2 : 1) || !handler) return manualOnly(target, `the route at line ${line} has no handler argument to put the middleware before`, line);
    if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return manualOnly(target, `the file already has its own binding named "idempotency"; mount the generated middleware by hand`, line);
    }
    insertArgumentAt(sf, call, args.length - 1, `idempotency.${target.codeName}`);
    call = routeCalls(sf, target)[located.occurrence ?? 0]!;
    out.edits.push({ action: target.action, file: target.file, summary: `mounts idempotency.${target.codeName} before the handler of ${target.method ?? 'POST'} ${target.path ?? ''}` });
  }
  const handler = call.getArguments()[call.getArguments().length - 1];
  const principal = handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler)) ? principalPathIn(handler, true) : undefined;
  if (principal) out.principal = principal;
  else if (target.scope !== undefined && target.scope !== 'global' && unauthenticated(target, context, call.getArguments().length === 3)) {
    // Nothing authenticates this route (its own middleware, its router's, its mount's; no user read in the handler):
    // a scoped key would answer every request 401. Say so rather than break e.g. a sign-up route.
    out.manual.push({ action: target.action, file: target.file, line: target.line, reason: noAuthenticationStep(target, context, 'put your auth middleware first') });
  }
  out.manual.push(...clientKeyStep(target));
  if (handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler))) {
    const keyed = keyStripeCalls(sf, handler, target, context);
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
  }
  return out;
};
