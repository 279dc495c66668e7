import { Node, type ArrowFunction, type CallExpression, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { providerCalls } from '../../findings/providerCalls.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { ensureNamedImport, morphNode } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import type { TransformContext, TransformOutcome } from './context.js';
import { guarded, type KeyPlacement } from './guardedKey.js';

export type KeyedHandler = ArrowFunction | FunctionExpression | MethodDeclaration | FunctionDeclaration;

/** How a provider's call takes the derived key, as the generated providers.ts helper gives it. */
export interface ProviderKeying {
  provider: PaymentProvider;
  /** The providers.ts export the edit imports. */
  helper: string;
  /** Package the SDK ships in, so the findings matcher recognises its calls. */
  dependency: string;
  /**
   * Where the key (the helper's call, as text) goes, decided before any edit; undefined when the call's shape leaves
   * no safe place (the caller lists it manual).
   */
  placement(call: CallExpression): KeyPlacement | undefined;
  /** Whether the call already passes a key apply did not write. */
  keyed(call: CallExpression): boolean;
  /** For messages: where the key goes. */
  where: string;
}

const objectArgs = (call: CallExpression) => call.getArguments().filter((a): a is ObjectLiteralExpression => Node.isObjectLiteralExpression(a));

/** A literal's own property by name (plain or quoted), if present. */
export const hasProperty = (object: ObjectLiteralExpression, name: string) => object.getProperties().some((p) => (Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p)) && p.getName().replace(/^['"]|['"]$/g, '') === name);

/**
 * @adyen/api-library: `checkout.PaymentsApi.payments(request, { idempotencyKey })`. The request options are the
 * argument after the request; apply adds them (or the key to them) and never touches the merchant `reference`.
 */
export const ADYEN: ProviderKeying = {
  provider: 'adyen',
  helper: 'adyenIdempotency',
  dependency: '@adyen/api-library',
  where: 'request options { idempotencyKey }',
  keyed: (call) => objectArgs(call).some((o) => hasProperty(o, 'idempotencyKey')),
  placement(call) {
    const args = call.getArguments();
    // The request is the first object literal (ids such as a pspReference come before it as plain values), or the
    // one argument when it is a name (`paymentsDetails(payload)`).
    const literalIndex = args.findIndex((a) => Node.isObjectLiteralExpression(a));
    const requestIndex = literalIndex >= 0 ? literalIndex : args.length === 1 && Node.isIdentifier(args[0]!) ? 0 : -1;
    if (requestIndex < 0) return undefined;
    const options = args[requestIndex + 1];
    if (options === undefined && args.length === requestIndex + 1) return (key, guard) => void call.addArgument(guarded(`{ idempotencyKey: ${key}.idempotencyKey }`, guard));
    if (options && Node.isObjectLiteralExpression(options)) return (key, guard) => void options.addPropertyAssignment({ name: 'idempotencyKey', initializer: guarded(`${key}.idempotencyKey`, guard) });
    return undefined;
  },
};

/**
 * The provider calls inside a protected handler (as the findings engine matches them) get the key derived from the
 * handler's idempotency context: the same key on every re-execution of the same request, one per call (step) when
 * the handler makes several. `ensureContext` adds `const idempotencyContext = idempotencyOf(req)` once.
 */
export function keyProviderCalls(sf: SourceFile, handler: KeyedHandler, target: WiringTarget, context: TransformContext, keying: ProviderKeying, ensureContext: () => string | undefined, viaHttp = false): TransformOutcome {
  const out: TransformOutcome = { edits: [], manual: [] };
  const source = { rel: sf.getFilePath(), text: sf.getFullText(), sf: sf.compilerNode, dependencies: new Map([[keying.dependency, '*']]) };
  const calls = providerCalls(source)
    .filter((f) => f.provider === keying.provider)
    .flatMap((f) => {
      const call = morphNode(handler, f.call, Node.isCallExpression);
      return call ? [{ call, operation: f.operation, keyed: f.key !== undefined }] : [];
    });
  if (calls.length === 0) {
    // A handler calling the provider's REST API itself is keyed by keyHttpCalls (httpKey.ts).
    if (viaHttp) return out;
    out.manual.push({ action: target.action, file: target.file, line: handler.getStartLineNumber(), reason: `the ${keying.provider} call is not made inside the route handler: pass idempotencyOf(request) down to it and add ${keying.helper}(context) from providers.ts as its ${keying.where}` });
    return out;
  }
  const open = calls.filter((c) => !c.keyed && !keying.keyed(c.call) && !c.call.getText().includes(`${keying.helper}(`));
  if (open.length === 0) return out;
  if (!context.scaffoldModules.has('providers')) {
    out.manual.push({ action: target.action, file: target.file, line: open[0]!.call.getStartLineNumber(), reason: `the scaffold has no providers.ts: regenerate with "${keying.provider}" in payments, then apply` });
    return out;
  }
  // Positions move with every edit: the calls are placed last-first.
  const lines = open.map((c) => c.call.getStartLineNumber());
  const name = ensureContext();
  if (name === undefined || !ensureNamedImport(sf, context.style.specifier('providers'), keying.helper)) {
    out.manual.push({ action: target.action, file: target.file, line: lines[0], reason: `${keying.provider} calls need ${keying.helper}(idempotencyOf(request)) as ${keying.where}; the handler has no named request parameter, its body is an expression, or a name is taken` });
    return out;
  }
  const several = open.length > 1;
  open.forEach((item, index) => {
    const place = keying.placement(item.call);
    if (place) {
      place(`${keying.helper}(${name}${several ? `, ${index}` : ''})`);
      out.edits.push({ action: target.action, file: target.file, summary: `passes the derived ${keying.provider} idempotency key to ${item.operation} (line ${lines[index]})` });
    } else {
      out.manual.push({ action: target.action, file: target.file, line: lines[index], reason: `${item.operation} needs ${keying.helper}(idempotencyOf(request)) as ${keying.where}; its arguments are not literals apply can extend` });
    }
  });
  return out;
}
