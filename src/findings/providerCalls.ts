import { ts } from 'ts-morph';
import type { FileContext } from '../inspect/detectors/detectorTypes.js';
import { rawHttpCall } from '../inspect/detectors/payments.js';
import { matchSdkCall, PROVIDER_MODULES } from '../inspect/detectors/sdkCalls.js';
import { lineOf, propertyName, unwrap } from '../inspect/parse/astHelpers.js';
import { indexSource, type ImportBinding } from '../inspect/parse/indexSource.js';
import type { PaymentProvider, PaymentRisk } from '../inspect/types.js';
import type { SourceContext } from './types.js';
import { innermostFunction, localInitializer } from './walk.js';

/**
 * Payment SDK calls as the findings rules see them, for every provider whose generated operation table
 * (src/inspect/providers) the inspector matches against: the same matcher `inspect` uses, so a call the inspector
 * reports is the call a rule checks, plus the argument nodes the rules read (parameters, the key expression).
 */
export interface ProviderCall {
  call: ts.CallExpression;
  provider: PaymentProvider;
  /** As the inspector names it: `refunds.create` (Stripe), `payments` (Adyen), `v2/checkout/orders` (PayPal). */
  operation: string;
  /** The SDK method as written: `create`, `payments`, `createOrder`. */
  method: string;
  verb: string;
  risk: PaymentRisk;
  /** The request parameters object, when it is a literal (or a local const holding one). */
  params?: ts.ObjectLiteralExpression;
  /**
   * Object literals the parameters variable is later given in the same function (`params = { ...params, mode }`
   * after `let params = { … }`): what the call may send as well.
   */
  reassigned?: ts.ObjectLiteralExpression[];
  /** The provider idempotency key expression, if one is passed. */
  key?: ts.Expression;
  /** Where the key would go exists but is not a literal we can read: the key may be inside. */
  opaqueOptions: boolean;
}

/** Where each provider's SDK takes its idempotency key; providers absent here have no key option (Braintree, Paddle). */
export const KEY_OPTIONS: Partial<Record<PaymentProvider, { where: 'options' | 'request'; name: string }>> = {
  stripe: { where: 'options', name: 'idempotencyKey' },
  adyen: { where: 'options', name: 'idempotencyKey' },
  paypal: { where: 'request', name: 'paypalRequestId' },
  square: { where: 'request', name: 'idempotencyKey' },
  mollie: { where: 'request', name: 'idempotencyKey' },
};

/** The header a provider's REST API reads the key from, for calls made over raw HTTP (fetch, axios, got, …). */
export const KEY_HEADERS: Partial<Record<PaymentProvider, string>> = { stripe: 'Idempotency-Key', adyen: 'Idempotency-Key', paypal: 'PayPal-Request-Id' };

/** The key option as the provider documents it, for messages: `idempotencyKey`, `paypalRequestId` (PayPal-Request-Id). */
export function keyOptionName(provider: PaymentProvider): string {
  return KEY_OPTIONS[provider]?.name ?? 'an idempotency key';
}

const PROVIDER_TEXT = /stripe|adyen|paypal|braintree|square|mollie|paddle|paymentIntents|checkout\.sessions/i;

const contexts = new WeakMap<ts.SourceFile, FileContext>();
const found = new WeakMap<ts.SourceFile, ProviderCall[]>();

/** Provider calls that change something at the provider (the tables' non-read operations), in source order. */
export function providerCalls(source: Pick<SourceContext, 'rel' | 'text' | 'sf' | 'dependencies'>): ProviderCall[] {
  if (!PROVIDER_TEXT.test(source.text)) return [];
  const cached = found.get(source.sf);
  if (cached) return cached;
  const ctx = fileContext(source);
  const imported = new Set<PaymentProvider>();
  for (const b of ctx.index.imports.values()) {
    const p = PROVIDER_MODULES[b.module];
    if (p) imported.add(p);
  }
  if (/require\(\s*['"]stripe['"]\s*\)/.test(source.text)) imported.add('stripe');
  const out: ProviderCall[] = [];
  for (const call of ctx.index.calls) {
    const sdk = matchSdkCall(call, ctx, imported);
    if (!sdk || !ts.isPropertyAccessExpression(call.expression)) continue;
    out.push({ call, provider: sdk.provider, operation: sdk.operation, method: call.expression.name.text, verb: sdk.verb, risk: sdk.risk, ...argumentsOf(sdk.provider, call) });
  }
  out.sort((a, b) => a.call.pos - b.call.pos);
  found.set(source.sf, out);
  return out;
}

/** A payment call made over raw HTTP (fetch, axios, got, undici, ky), as the inspector reports it (`via: 'http'`). */
export interface HttpProviderCall {
  call: ts.CallExpression;
  provider: PaymentProvider;
  /** As the inspector names it from the path: `refunds.create` (Stripe), `v2/checkout/orders` (PayPal). */
  operation: string;
  /** Whether the inspector sees the provider's idempotency header (Idempotency-Key, PayPal-Request-Id) sent. */
  keyed: boolean;
  /** The header's value where the file shows it (a headers literal, `headers.set(…)`); absent when only named out of sight. */
  key?: ts.Expression;
  /** The value is made anew on each call (`randomUUID()`), so a retried request sends another key. */
  keyPerAttempt: boolean;
  /** The HTTP method: POST, PUT or PATCH. */
  verb: string;
  risk: PaymentRisk;
}

/** Raw-HTTP provider calls that change something (POST, PUT, PATCH), in source order: the inspector's own matcher. */
export function httpProviderCalls(source: Pick<SourceContext, 'rel' | 'text' | 'sf' | 'dependencies'>): HttpProviderCall[] {
  if (!PROVIDER_TEXT.test(source.text)) return [];
  const ctx = fileContext(source);
  return ctx.index.calls.flatMap((call) => {
    const found = rawHttpCall(call, ctx);
    if (!found) return [];
    return [{ call, provider: found.provider, operation: found.operation, keyed: found.hasProviderKey, ...(found.key ? { key: found.key } : {}), keyPerAttempt: found.keyPerAttempt === true, verb: found.verb ?? 'POST', risk: found.risk ?? 'billable-object' }];
  }).sort((a, b) => a.call.pos - b.call.pos);
}

/** The inspector's per-file context over a source the findings engine already parsed (no second parse). */
export function fileContext(source: Pick<SourceContext, 'rel' | 'text' | 'sf' | 'dependencies'>): FileContext {
  const cached = contexts.get(source.sf);
  if (cached) return cached;
  const index = indexSource(source.sf, source.rel);
  const payments = [...new Set([...source.dependencies.keys()].flatMap((dep) => (Object.hasOwn(PROVIDER_MODULES, dep) ? [PROVIDER_MODULES[dep] as string] : [])))].sort();
  const ctx: FileContext = {
    rel: source.rel,
    text: source.text,
    sf: source.sf,
    index,
    pkg: { dir: '', stack: { language: 'typescript', frameworks: [], databases: [], orms: [], brokers: [], testFramework: 'unknown', packageManager: 'unknown', payments } },
    line: (node) => lineOf(source.sf, node),
    originOf: (expr) => originOf(expr, index.imports),
  };
  contexts.set(source.sf, ctx);
  return ctx;
}

function originOf(expr: ts.Expression, imports: Map<string, ImportBinding>): ImportBinding | undefined {
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) return imports.get(node.text);
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
    const arg = node.arguments[0];
    return arg && ts.isStringLiteral(arg) ? { module: arg.text, imported: '*' } : undefined;
  }
  if (ts.isPropertyAccessExpression(node)) {
    const base = originOf(node.expression, imports);
    if (base && (base.imported === '*' || base.imported === 'default')) return { module: base.module, imported: node.name.text };
  }
  return undefined;
}

/** Stripe methods that take the object id first: `paymentIntents.capture(id, params, options)`, `transfers.createReversal(id, …)`. */
const ID_FIRST = /^(capture|confirm|update|resume|pay|finalizeInvoice|incrementAuthorization|cancel|void|markUncollectible|sendInvoice|attach|detach|verify|apply\w*|create[A-Z]\w*)$/;

function argumentsOf(provider: PaymentProvider, call: ts.CallExpression): Pick<ProviderCall, 'params' | 'reassigned' | 'key' | 'opaqueOptions'> {
  const found = argumentsIn(provider, call);
  const arg = found.params && call.arguments.find((a) => literal(a) === found.params);
  const reassigned = arg ? reassignedLiterals(arg) : [];
  return reassigned.length > 0 ? { ...found, reassigned } : found;
}

/** `name = { … }` assignments to the identifier `arg` inside its function (or file), in source order. */
function reassignedLiterals(arg: ts.Expression): ts.ObjectLiteralExpression[] {
  const id = unwrap(arg);
  if (!ts.isIdentifier(id)) return [];
  const scope = innermostFunction(id) ?? id.getSourceFile();
  const out: ts.ObjectLiteralExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isIdentifier(node.left) && node.left.text === id.text) {
      const value = unwrap(node.right);
      if (ts.isObjectLiteralExpression(value)) out.push(value);
    }
    ts.forEachChild(node, visit);
  };
  visit(scope);
  return out;
}

function argumentsIn(provider: PaymentProvider, call: ts.CallExpression): Pick<ProviderCall, 'params' | 'key' | 'opaqueOptions'> {
  const args = call.arguments;
  const method = ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : '';
  // Other SDKs take ids as plain strings before the request object (`refundCapturedPayment(pspReference, request, options)`).
  const firstObject = args.findIndex((arg) => literal(arg) !== undefined);
  const first = provider === 'stripe' ? (ID_FIRST.test(method) ? 1 : 0) : Math.max(0, firstObject);
  const option = KEY_OPTIONS[provider];
  const request = literal(args[first]);
  if (!option) return { ...(request ? { params: request } : {}), opaqueOptions: false };
  if (option.where === 'request') {
    // PayPal's server SDK: `{ body, paypalRequestId }`; Square and Mollie: the key sits among the parameters.
    const key = request ? (property(request, option.name) ?? property(request, 'payPalRequestId')) : undefined;
    const body = request && provider === 'paypal' ? literal(property(request, 'body')) : undefined;
    const params = body ?? request;
    return { ...(params ? { params } : {}), ...(key ? { key } : {}), opaqueOptions: args[first] !== undefined && !request };
  }
  // `capture(id, { idempotencyKey })` has no parameters: the one object is the request options.
  const keyed = args.slice(first).findIndex((arg) => {
    const obj = literal(arg);
    return obj !== undefined && property(obj, option.name) !== undefined;
  });
  const optionsIndex = keyed >= 0 ? first + keyed : first + 1;
  const options = literal(args[optionsIndex]);
  const key = options ? property(options, option.name) : undefined;
  const params = optionsIndex > first ? request : undefined;
  // stripe-node's old callback form, `charges.create(params, (err, charge) => …)`: the function is no request options.
  const given = args[optionsIndex];
  const callback = given !== undefined && (ts.isArrowFunction(unwrap(given)) || ts.isFunctionExpression(unwrap(given)));
  return { ...(params ? { params } : {}), ...(key ? { key } : {}), opaqueOptions: given !== undefined && !options && !callback };
}

export function literal(arg: ts.Expression | undefined): ts.ObjectLiteralExpression | undefined {
  if (!arg) return undefined;
  let node = unwrap(arg);
  if (ts.isIdentifier(node)) {
    const init = localInitializer(node);
    if (init) node = unwrap(init);
  }
  return ts.isObjectLiteralExpression(node) ? node : undefined;
}

export function property(obj: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const prop of obj.properties) {
    if (ts.isPropertyAssignment(prop) && propertyName(prop.name) === name) return prop.initializer;
    if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === name) return prop.name;
  }
  return undefined;
}

/** Calls whose repetition restores the same state (updates, deletes, cancels): a duplicate is harmless by nature. */
export function repeatsSafely(call: Pick<ProviderCall, 'method' | 'verb'>): boolean {
  return call.verb === 'DELETE' || call.verb === 'PUT' || call.verb === 'PATCH' || /^(update|modify|del|delete|cancel|expire|void|close|archive|detach|remove|retrieve|list|get)/i.test(call.method);
}
