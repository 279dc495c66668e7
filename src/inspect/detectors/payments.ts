import { ts } from 'ts-morph';
import { accessChain, looseStringValue, objectProperty, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { PaymentFinding, PaymentProvider } from '../types.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';
import { ADYEN_METHODS, PAYPAL_CONTROLLER_METHODS, PAYPAL_REQUESTS, PROVIDER_HOSTS, STRIPE_OPERATIONS } from './paymentOperations.js';

const PROVIDER_MODULES: Record<string, PaymentProvider> = {
  stripe: 'stripe', '@adyen/api-library': 'adyen', '@paypal/checkout-server-sdk': 'paypal',
  '@paypal/paypal-server-sdk': 'paypal', 'paypal-rest-sdk': 'paypal',
};
/** Receivers that are our own data layer, never a provider client (`prisma.refunds.create`). */
const DATA_LAYER = /prisma|\bdb\b|database|repo|repository|model|knex|orm|mongo|sequelize|drizzle|tx\b|trx\b|em\b|manager/i;

/**
 * Stripe, Adyen and PayPal calls that move money, through any receiver (aliases, `getStripe()`, `this.stripe`,
 * injected clients) and as raw HTTP to the providers' REST APIs; each with whether a provider key is passed.
 */
export const payments: Detector = {
  name: 'payments',
  mentions: /stripe|adyen|paypal|paymentIntents|checkout\.sessions|OrdersCreateRequest/i,
  detect(ctx, facts) {
    const imported = new Set<PaymentProvider>();
    for (const b of ctx.index.imports.values()) {
      const p = PROVIDER_MODULES[b.module];
      if (p) imported.add(p);
    }
    for (const call of ctx.index.calls) {
      const found = stripeCall(call, ctx, imported) ?? adyenCall(call, ctx, imported) ?? paypalControllerCall(call, ctx, imported) ?? rawHttpCall(call, ctx);
      if (found) record(call, found, ctx, facts);
    }
    for (const expr of ctx.index.news) {
      const last = accessChain(expr.expression).pop() ?? '';
      const operation = Object.hasOwn(PAYPAL_REQUESTS, last) ? PAYPAL_REQUESTS[last] : undefined;
      if (!operation) continue;
      // The request object carries the header: `request.headers['PayPal-Request-Id'] = …` or `.payPalRequestId(id)`.
      const scope = enclosingFunctions(expr).outermost ?? ctx.sf;
      record(expr, { provider: 'paypal', operation, hasProviderKey: /paypal-?request-?id/i.test(scope.getText(ctx.sf)) }, ctx, facts);
    }
  },
};

interface Detected {
  provider: PaymentProvider;
  operation: string;
  hasProviderKey: boolean;
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
    ...(enclosing.name ? { enclosingFunction: enclosing.name } : {}),
  };
  facts.findings.push(finding);
  facts.paymentFunctionKeys.push(...enclosing.keys);
  if (found.hasProviderKey) {
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

/** An option object (or a same-file constant holding one) among `args` with one of `names` at its top level. */
function passesOption(args: readonly ts.Expression[], names: RegExp, ctx: FileContext): boolean {
  return args.some((arg) => {
    let node = unwrap(arg);
    if (ts.isIdentifier(node)) {
      if (names.test(node.text)) return true;
      const init = ctx.index.consts.get(node.text);
      if (init) node = unwrap(init);
    }
    if (!ts.isObjectLiteralExpression(node)) return false;
    return node.properties.some((p) => {
      const name = p.name ? propertyName(p.name as ts.PropertyName) : undefined;
      return name !== undefined && names.test(name);
    });
  });
}

function stripeCall(call: ts.CallExpression, ctx: FileContext, imported: Set<PaymentProvider>): Detected | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const chain = accessChain(call.expression);
  const method = chain[chain.length - 1] ?? '';
  for (const op of STRIPE_OPERATIONS) {
    if (!op.methods.includes(method)) continue;
    const n = op.resource.length;
    const resource = chain.slice(-1 - n, -1);
    if (resource.join('.') !== op.resource.join('.')) continue;
    const receiver = chain.slice(0, -1 - n).join('.');
    if (!receiver || DATA_LAYER.test(receiver)) return undefined;
    const stripeish = /stripe/i.test(receiver) || imported.has('stripe');
    if (!stripeish && !(op.specific && ctx.pkg.stack.payments.includes('stripe'))) return undefined;
    return {
      provider: 'stripe',
      operation: `${op.resource.join('.')}.${method}`,
      hasProviderKey: passesOption(call.arguments.slice(1), /^idempotencyKey$/, ctx),
    };
  }
  return undefined;
}

function adyenCall(call: ts.CallExpression, ctx: FileContext, imported: Set<PaymentProvider>): Detected | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const method = call.expression.name.text;
  if (!ADYEN_METHODS.has(method)) return undefined;
  const receiver = accessChain(call.expression.expression).join('.');
  const adyenish = /adyen/i.test(receiver) || (imported.has('adyen') && !imported.has('paypal') && !DATA_LAYER.test(receiver));
  if (!adyenish || /paypal/i.test(receiver)) return undefined;
  // Classic `capture`/`refund` names are too common to accept without an Adyen-looking receiver.
  if ((method === 'capture' || method === 'refund') && !/adyen|modification/i.test(receiver)) return undefined;
  return { provider: 'adyen', operation: method, hasProviderKey: passesOption(call.arguments.slice(1), /^idempotencyKey$/, ctx) };
}

function paypalControllerCall(call: ts.CallExpression, ctx: FileContext, imported: Set<PaymentProvider>): Detected | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const method = call.expression.name.text;
  const chain = accessChain(call.expression.expression);
  // paypal-rest-sdk: paypal.payment.create(json, cb)
  if (method === 'create' && chain[chain.length - 1] === 'payment' && /paypal/i.test(chain.join('.'))) {
    return { provider: 'paypal', operation: 'v1/payments/payment', hasProviderKey: false };
  }
  const operation = Object.hasOwn(PAYPAL_CONTROLLER_METHODS, method) ? PAYPAL_CONTROLLER_METHODS[method] : undefined;
  if (!operation) return undefined;
  const receiver = chain.join('.');
  if (!(/paypal|ordersController|paymentsController/i.test(receiver) || (imported.has('paypal') && !imported.has('adyen')))) return undefined;
  return { provider: 'paypal', operation, hasProviderKey: passesOption(call.arguments, /^(paypalRequestId|payPalRequestId|requestId)$/, ctx) };
}

const CLIENT_CALL = /^(fetch|\$fetch|ofetch|request|got|ky|axios|undici)$/;

/** `fetch('https://api.stripe.com/v1/refunds', { method: 'POST' })`, `axios.post(`${PAYPAL}/v2/checkout/orders`)`. */
function rawHttpCall(call: ts.CallExpression, ctx: FileContext): Detected | undefined {
  const url = looseStringValue(call.arguments[0], ctx.index.consts);
  if (!url || !/^(https?:|\{)/.test(url)) return undefined;
  let provider = PROVIDER_HOSTS.find((p) => p.host.test(url))?.provider;
  if (!provider && url.startsWith('{')) {
    // Base URL from configuration: `${process.env.PAYPAL_API}/v2/checkout/orders`.
    const base = /^\{([^}]*)\}/.exec(url)?.[1] ?? '';
    provider = (['stripe', 'adyen', 'paypal'] as const).find((p) => new RegExp(p, 'i').test(base));
  }
  if (!provider) return undefined;
  const callee = call.expression;
  let method: string | undefined;
  if (ts.isIdentifier(callee) && CLIENT_CALL.test(callee.text)) {
    const m = objectProperty(call.arguments[1], 'method');
    method = m ? (stringValue(m, ctx.index.consts)?.toUpperCase() ?? 'POST') : 'GET';
  } else if (ts.isPropertyAccessExpression(callee)) method = callee.name.text.toUpperCase();
  if (!method || !/^(POST|PUT|PATCH)$/.test(method)) return undefined;
  const header = provider === 'paypal' ? /^paypal-request-id$/i : /^idempotency-key$/i;
  const scope = enclosingFunctions(call).outermost;
  const hasProviderKey = call.arguments.slice(1).some((a) => hasNestedProperty(a, header, ctx)) ||
    (scope !== undefined && new RegExp(`['"\`]${header.source.slice(1, -1)}['"\`]`, 'i').test(scope.getText(ctx.sf)));
  return { provider, operation: operationFromPath(provider, url), hasProviderKey };
}

function hasNestedProperty(arg: ts.Expression, name: RegExp, ctx: FileContext): boolean {
  let node = unwrap(arg);
  if (ts.isIdentifier(node)) node = ctx.index.consts.get(node.text) ?? node;
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if ((ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) && name.test(propertyName(n.name) ?? '')) found = true;
    else if (ts.isIdentifier(n) && n !== node) {
      const init = ctx.index.consts.get(n.text);
      if (init && ts.isObjectLiteralExpression(unwrap(init))) visit(unwrap(init));
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
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
