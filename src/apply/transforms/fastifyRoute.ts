import { Node } from 'ts-morph';
import { ensureNamedImport, insertArgumentAt, spreadFirst } from '../sourceFile.js';
import { isWired, locateRoute, routeCalls } from '../locateRoute.js';
import { clientKeyStep, manualOnly, type Transform, type TransformOutcome } from './context.js';
import { keyStripeCalls } from './stripeKey.js';
import { principalPathIn } from '../principalPath.js';

/** Hooks the generated route options set; a route that already sets one of them needs a hand-made merge. */
const HOOKS = ['preHandler', 'onSend'];

/**
 * Fastify: the generated preHandler/onSend pair are the route's options, `app.post(url, idempotency.name, handler)`;
 * a route that already has an options object gets them spread into it (`{ ...idempotency.name, schema }`).
 */
export const wireFastifyRoute: Transform = (sf, target, context) => {
  const located = locateRoute(sf, target, context.anyLine);
  if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
  if (located.kind === 'unsupported') return manualOnly(target, located.reason);
  let call = located.call;
  const line = call.getStartLineNumber();
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
