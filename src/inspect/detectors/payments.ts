import { ts } from 'ts-morph';
import { accessChain, looseStringValue, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { PaymentFinding, PaymentProvider, PaymentRisk } from '../types.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';
import { httpHeaderValue } from './httpKeyHeader.js';
import { PAYPAL_REQUESTS, PROVIDER_HOSTS } from './paymentOperations.js';
import { matchSdkCall, PROVIDER_MODULES } from './sdkCalls.js';
import { volatilePart } from '../../findings/volatile.js';

/**
 * Payment SDK calls that change something at the provider (Stripe, Adyen, PayPal, Braintree, Square, Mollie, Paddle,
 * from the generated operation tables), through any receiver (aliases, `getStripe()`, `this.stripe`, injected
 * clients), and raw HTTP to the providers' REST APIs; each with its risk and whether a provider key is passed.
 */
export const payments: Detector = {
  name: 'payments',
  mentions: /stripe|adyen|paypal|braintree|square|mollie|paddle|paymentIntents|checkout\.sessions|OrdersCreateRequest|\.transaction\.sale/i,
  detect(ctx, facts) {
    const imported = new Set<PaymentProvider>();
    for (const b of ctx.index.imports.values()) {
      const p = PROVIDER_MODULES[b.module];
      if (p) imported.add(p);
    }
    for (const call of ctx.index.calls) {
      const sdk = matchSdkCall(call, ctx, imported);
      const found = sdk ? { ...sdk, via: 'sdk' as const } : (paypalRestSdkCall(call) ?? rawHttpCall(call, ctx));
      if (found) record(call, found, ctx, facts);
    }
    for (const expr of ctx.index.news) {
      const last = accessChain(expr.expression).pop() ?? '';
      const operation = Object.hasOwn(PAYPAL_REQUESTS, last) ? PAYPAL_REQUESTS[last] : undefined;
      if (!operation) continue;
      // The request object carries the header: `request.headers['PayPal-Request-Id'] = …` or `.payPalRequestId(id)`.
      const scope = enclosingFunctions(expr).outermost ?? ctx.sf;
      record(expr, { provider: 'paypal', operation, verb: 'POST', risk: /capture|refund|authori[sz]e|payouts/.test(operation) ? 'moves-money' : 'billable-object', via: 'sdk', hasProviderKey: /paypal-?request-?id/i.test(scope.getText(ctx.sf)) }, ctx, facts);
    }
  },
};

export interface Detected {
  provider: PaymentProvider;
  operation: string;
  hasProviderKey: boolean;
  /** The key is made on each call (`randomUUID()`): it protects the SDK's own retries, not a retry of the request. */
  keyPerAttempt?: boolean;
  /** The key a raw-HTTP call sends in the provider's header, where the file shows it. */
  key?: ts.Expression;
  verb?: string;
  risk?: PaymentRisk;
  via?: 'sdk' | 'http';
}

function record(node: ts.Node, found: Detected, ctx: FileContext, facts: FileFacts): void {
  const enclosing = enclosingFunctions(node);
  const finding: PaymentFinding = {
    kind: 'payment',
    id: `${found.provider} ${found.operation}`,
    file: ctx.rel,
    line: ctx.line(node),
    provider: found.provider,
    operation: found.operation,
    hasProviderKey: found.hasProviderKey,
    ...(found.keyPerAttempt ? { keyPerAttempt: true } : {}),
    ...(found.risk ? { risk: found.risk } : {}),
    ...(found.verb ? { httpMethod: found.verb } : {}),
    ...(found.via ? { via: found.via } : {}),
    ...(enclosing.name ? { enclosingFunction: enclosing.name } : {}),
  };
  facts.findings.push(finding);
  facts.paymentFunctionKeys.push(...enclosing.keys);
  if (found.risk !== 'harmless-object') facts.riskyPaymentFunctionKeys.push(...enclosing.keys);
  // A key made on each call is no protection against a retry of the request: not credited (the per-attempt-key
  // finding says why and how to fix it).
  if (found.hasProviderKey && !found.keyPerAttempt) {
    facts.findings.push({
      kind: 'existing-idempotency',
      id: `provider-key ${found.provider} ${found.operation}`,
      file: ctx.rel,
      line: finding.line,
      mechanism: 'provider-key',
      detail: `${found.provider} ${found.operation} passes ${found.provider === 'paypal' ? 'PayPal-Request-Id' : 'an idempotency key'}`,
    });
  }
}

/** paypal-rest-sdk: `paypal.payment.create(json, cb)`. */
function paypalRestSdkCall(call: ts.CallExpression): Detected | undefined {
  if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'create') return undefined;
  const chain = accessChain(call.expression.expression);
  if (chain[chain.length - 1] !== 'payment' || !/paypal/i.test(chain.join('.'))) return undefined;
  return { provider: 'paypal', operation: 'v1/payments/payment', verb: 'POST', risk: 'moves-money', via: 'sdk', hasProviderKey: false };
}

/** REST paths that identify a provider without its host (a client created with the provider's base URL). */
const RELATIVE_PATHS: Array<{ provider: 'stripe' | 'paypal'; path: RegExp; named: RegExp }> = [
  { provider: 'paypal', path: /^\/v[12]\/(checkout\/orders|payments\/|billing\/(subscriptions|plans)|vault\/)/, named: /paypal/i },
  {
    provider: 'stripe',
    path: /^\/v1\/(payment_intents|setup_intents|charges|refunds|customers|subscriptions|invoices|transfers|payouts|checkout\/sessions)\b/,
    named: /stripe/i,
  },
];

const CLIENT_CALL = /^(fetch|\$fetch|ofetch|request|got|ky|axios|undici)$/;

/** `fetch('https://api.stripe.com/v1/refunds', { method: 'POST' })`, `axios.post(`${PAYPAL}/v2/checkout/orders`)`. */
export function rawHttpCall(call: ts.CallExpression, ctx: FileContext): Detected | undefined {
  // axios({ url, method, headers }) / got({ url, method }): one config object.
  const config = call.arguments.length === 1 && ts.isIdentifier(call.expression) && CLIENT_CALL.test(call.expression.text) ? objectProperty(call.arguments[0], 'url') : undefined;
  const target = config ?? call.arguments[0];
  const url = looseStringValue(target && localInitializer(target, call), ctx.index.consts) ?? looseStringValue(target, ctx.index.consts);
  if (!url || !/^(https?:|\{|\/v\d)/.test(url)) return undefined;
  // Credentials and client tokens are plumbing, not payment operations.
  if (/oauth2\/token|\/identity\/|generate-token|\/v1\/notifications\/verify-webhook-signature/i.test(url)) return undefined;
  let provider = PROVIDER_HOSTS.find((p) => p.host.test(url))?.provider;
  if (!provider && url.startsWith('{')) {
    // Base URL from configuration: `${process.env.PAYPAL_API}/v2/checkout/orders`.
    const base = /^\{([^}]*)\}/.exec(url)?.[1] ?? '';
    provider = (['stripe', 'adyen', 'paypal'] as const).find((p) => new RegExp(p, 'i').test(base));
  }
  // `paypal.post('/v2/checkout/orders', body)` on a client whose baseURL is the provider's (axios.create, got.extend):
  // a path only that provider's REST API has, in a file that names the provider.
  // (A bare fetch('/v2/...') is a browser's call to its own origin.)
  if (!provider && url.startsWith('/') && ts.isPropertyAccessExpression(call.expression)) provider = RELATIVE_PATHS.find((p) => p.path.test(url) && p.named.test(ctx.text))?.provider;
  if (!provider) return undefined;
  const callee = call.expression;
  let method: string | undefined;
  if (ts.isIdentifier(callee) && CLIENT_CALL.test(callee.text)) {
    // `const init = { method: 'POST', … }; fetch(url, init)`: the options a local holds.
    const options = config ? call.arguments[0] : call.arguments[1];
    const m = objectProperty(options && (localInitializer(options, call) ?? options), 'method');
    method = m ? (stringValue(m, ctx.index.consts)?.toUpperCase() ?? 'POST') : 'GET';
  } else if (ts.isPropertyAccessExpression(callee)) method = callee.name.text.toUpperCase();
  if (!method || !/^(POST|PUT|PATCH)$/.test(method)) return undefined;
  const header = provider === 'paypal' ? /^paypal-request-id$/i : /^idempotency-key$/i;
  const sent = httpHeaderValue(call, call.arguments.slice(config ? 0 : 1), header);
  // Headers built out of sight (a parameter, a helper's result): the header named anywhere in the function counts.
  const scope = enclosingFunctions(call).outermost;
  const named = sent.opaque && scope !== undefined && new RegExp(`['"\`]${header.source.slice(1, -1)}['"\`]`, 'i').test(scope.getText(ctx.sf));
  const operation = operationFromPath(provider, url);
  const perAttempt = sent.value !== undefined && volatilePart(sent.value) !== undefined;
  return { provider, operation, hasProviderKey: sent.value !== undefined || named, ...(perAttempt ? { keyPerAttempt: true } : {}), ...(sent.value ? { key: sent.value } : {}), verb: method, risk: restRisk(provider, operation), via: 'http' };
}

/** REST path → operation: Stripe in SDK terms (`paymentIntents.capture`), Adyen without version, PayPal as the path. */
export function operationFromPath(provider: PaymentProvider, url: string): string {
  const pathPart = url.replace(/^https?:\/\/[^/]+/, '').replace(/^\{[^}]*\}/, '').split('?')[0] ?? '';
  const segments = pathPart.split('/').filter(Boolean).map((s) => (/^\{|^(pi|ch|cus|sub|in|re|cs)_|^\d+$/.test(s) ? '{id}' : s));
  if (provider === 'stripe') {
    const named = segments.filter((s) => s !== '{id}' && !/^v\d+$/.test(s));
    const endsWithId = segments[segments.length - 1] === '{id}';
    const last = named[named.length - 1] ?? '';
    const isVerb = segments.length >= 2 && segments[segments.length - 2] === '{id}';
    const camel = (s: string) => s.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
    if (isVerb) return `${named.slice(0, -1).map(camel).join('.')}.${camel(last)}`;
    return `${named.map(camel).join('.')}.${endsWithId ? 'update' : 'create'}`;
  }
  if (provider === 'adyen') return segments.filter((s) => !/^v\d+$/.test(s)).join('/');
  return segments.join('/');
}

/** REST paths carry the same meaning as SDK operations: money moves on payments, captures, refunds, payouts. */
function restRisk(provider: PaymentProvider, operation: string): PaymentRisk {
  if (/session|link|token|webhook/i.test(operation)) return 'harmless-object';
  if (/capture|refund|payout|transfer|authori[sz]e|payment_intents|paymentIntents|charges|payments\b|checkout\/orders\/\{id\}|topups/i.test(operation)) return 'moves-money';
  return provider === 'paypal' && /checkout\/orders$/.test(operation) ? 'billable-object' : 'billable-object';
}

/** `const url = `${base}/v2/checkout/orders`; fetch(url, …)`: the declaration in the calling function, not a same-named one elsewhere. */
function localInitializer(expr: ts.Expression, call: ts.Node): ts.Expression | undefined {
  const node = unwrap(expr);
  if (!ts.isIdentifier(node)) return undefined;
  const scope = enclosingFunctions(call).innermost;
  if (!scope) return undefined;
  let found: ts.Expression | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === node.text && n.initializer && n.getStart() < call.getStart()) found = n.initializer;
    else ts.forEachChild(n, visit);
  };
  visit(scope);
  return found;
}
