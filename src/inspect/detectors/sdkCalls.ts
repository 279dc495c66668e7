import { ts } from 'ts-morph';
import { accessChain, propertyName, unwrap } from '../parse/astHelpers.js';
import { operationsByMethod, type PaymentRisk, type ProviderOperation } from '../providers/index.js';
import type { PaymentProvider } from '../types.js';
import type { FileContext } from './detectorTypes.js';
import { PAYPAL_CONTROLLER_METHODS } from './paymentOperations.js';
import { volatilePart } from '../../findings/volatile.js';

export const PROVIDER_MODULES: Record<string, PaymentProvider> = {
  stripe: 'stripe', '@adyen/api-library': 'adyen', '@paypal/checkout-server-sdk': 'paypal',
  '@paypal/paypal-server-sdk': 'paypal', 'paypal-rest-sdk': 'paypal', braintree: 'braintree', square: 'square',
  '@mollie/api-client': 'mollie', '@paddle/paddle-node-sdk': 'paddle',
};

/** A receiver named after the provider (`stripe`, `this.stripeClient`, `getStripe()`, `mollieClient`). */
const RECEIVER_NAMES: Record<PaymentProvider, RegExp> = {
  stripe: /stripe/i, adyen: /adyen/i, paypal: /paypal/i, braintree: /braintree/i, square: /square/i, mollie: /mollie/i, paddle: /paddle/i,
};

/** Receivers that are our own data layer, never a provider client (`prisma.refunds.create`). */
export const DATA_LAYER = /prisma|\bdb\b|database|repo|repository|model|knex|orm|mongo|sequelize|drizzle|tx\b|trx\b|em\b|manager|service|store|dao|api\b|http|axios|fetch/i;

/** Resource names every billing domain model also has: never trusted on package-level evidence alone. */
const GENERIC_RESOURCES = new Set([
  'customers', 'customer', 'refunds', 'refund', 'charges', 'payments', 'payment', 'subscriptions', 'subscription', 'invoices',
  'invoice', 'payouts', 'transfers', 'products', 'prices', 'plans', 'plan', 'orders', 'order', 'transactions', 'transaction',
  'files', 'events', 'accounts', 'tokens', 'sessions', 'addresses', 'address', 'discounts', 'discount', 'notifications',
  'locations', 'cards', 'items', 'methods', 'settlements', 'balance', 'reports', 'disputes', 'dispute',
]);

/** Adyen services and PayPal controllers are usually held in a variable of the caller's choosing. */
const CLASS_HELD = new Set<PaymentProvider>(['adyen', 'paypal']);
/** Method names too common in application code to accept from a class-held service without provider evidence. */
const GENERIC_METHODS = /^(create|update|get|delete|cancel|capture|refund|payments|sessions|orders|authorise|list|sync|async|post|submit|add|remove)$/;

/** Variables that hold an SDK service in the providers' own examples (`checkout`, `modificationsApi`, `ordersController`). */
const SDK_HOLDER = /checkout|modification|payout|recurring|terminal|classic|api$|controller$|client$/i;

const KEY_OPTION: Record<PaymentProvider, { args: 'options' | 'all'; name: RegExp } | undefined> = {
  stripe: { args: 'options', name: /^idempotencyKey$/ },
  adyen: { args: 'options', name: /^idempotencyKey$/ },
  paypal: { args: 'all', name: /^(paypalRequestId|payPalRequestId)$/ },
  square: { args: 'all', name: /^idempotencyKey$/ },
  mollie: { args: 'all', name: /^idempotencyKey$/ },
  braintree: undefined,
  paddle: undefined,
};

export interface SdkCall {
  provider: PaymentProvider;
  operation: string;
  verb: string;
  risk: PaymentRisk;
  hasProviderKey: boolean;
  /** The key passed is made on each call (`randomUUID()`, `Date.now()`): a retry of the request sends another. */
  keyPerAttempt?: boolean;
}

/**
 * A call to a payment SDK operation that changes something at the provider, matched against the generated
 * operation tables. A provider is accepted on evidence: a receiver named after it, an import of its SDK in this
 * file, or an operation path only that SDK has in a package that depends on it.
 */
export function matchSdkCall(call: ts.CallExpression, ctx: FileContext, imported: ReadonlySet<PaymentProvider>): SdkCall | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const chain = accessChain(call.expression).map((p) => p.replace(/\(\)$/, ''));
  const method = chain[chain.length - 1] ?? '';
  const candidates = (operationsByMethod.get(method) ?? []).filter((op) => op.risk !== 'read');
  let best: { op: ProviderOperation; score: number } | undefined;
  for (const op of candidates) {
    const provider = op.provider as PaymentProvider;
    const score = evidence(op, provider, chain, ctx, imported);
    if (score > 0 && (!best || score > best.score)) best = { op, score };
  }
  if (!best) return undefined;
  const provider = best.op.provider as PaymentProvider;
  return {
    provider,
    operation: operationName(provider, best.op),
    verb: best.op.verb,
    risk: best.op.risk,
    ...passesKey(provider, call.arguments, ctx),
  };
}

function evidence(op: ProviderOperation, provider: PaymentProvider, chain: string[], ctx: FileContext, imported: ReadonlySet<PaymentProvider>): number {
  const n = op.resource.length;
  const named = RECEIVER_NAMES[provider];
  const inStack = ctx.pkg.stack.payments.includes(provider);
  if (CLASS_HELD.has(provider)) {
    const holder = chain[chain.length - 2] ?? '';
    const receiver = chain.slice(0, -1).join('.');
    if (!receiver || (DATA_LAYER.test(receiver) && !named.test(receiver) && !/Api$|Controller$/i.test(holder))) return 0;
    const classMatch = holder.toLowerCase() === (op.resource[n - 1] ?? '').toLowerCase();
    if (named.test(receiver)) return 3;
    if (classMatch && (imported.has(provider) || inStack)) return 2;
    if (imported.has(provider) && imported.size === 1 && (!GENERIC_METHODS.test(op.method) || SDK_HOLDER.test(holder))) return 1;
    return 0;
  }
  const resource = chain.slice(-1 - n, -1);
  if (resource.join('.') !== op.resource.join('.')) return 0;
  const receiver = chain.slice(0, -1 - n).join('.');
  if (!receiver) return 0;
  if (named.test(receiver)) return 3;
  if (DATA_LAYER.test(receiver)) return 0;
  if (imported.has(provider)) return 2;
  const specific = n > 1 || !GENERIC_RESOURCES.has(op.resource[0] ?? '');
  // Braintree's client is conventionally `gateway`; its resource names are singular and its own.
  if (provider === 'braintree' && inStack && /gateway/i.test(receiver)) return 2;
  return specific && inStack ? 1 : 0;
}

/** Stripe and the resource-style SDKs as `resource.method`; Adyen as its method; PayPal as the REST path when known. */
function operationName(provider: PaymentProvider, op: ProviderOperation): string {
  if (provider === 'adyen') return op.method;
  if (provider === 'paypal') return Object.hasOwn(PAYPAL_CONTROLLER_METHODS, op.method) ? (PAYPAL_CONTROLLER_METHODS[op.method] as string) : `${op.resource.join('.')}.${op.method}`;
  return `${op.resource.join('.')}.${op.method}`;
}

function passesKey(provider: PaymentProvider, args: readonly ts.Expression[], ctx: FileContext): { hasProviderKey: boolean; keyPerAttempt?: true } {
  const rule = KEY_OPTION[provider];
  if (!rule) return { hasProviderKey: false };
  const options = rule.args === 'options' ? args.slice(1) : args;
  if (!hasTopLevelOption(options, rule.name, ctx)) return { hasProviderKey: false };
  const value = topLevelOptionValue(options, rule.name, ctx);
  return value !== undefined && volatilePart(value) !== undefined ? { hasProviderKey: true, keyPerAttempt: true } : { hasProviderKey: true };
}

/** The value given to the first of `names` in an option object literal among `args` (the name itself when shorthand). */
function topLevelOptionValue(args: readonly ts.Expression[], names: RegExp, ctx: FileContext): ts.Expression | undefined {
  for (const arg of args) {
    let node = unwrap(arg);
    if (ts.isIdentifier(node)) node = unwrap(ctx.index.consts.get(node.text) ?? node);
    if (!ts.isObjectLiteralExpression(node)) continue;
    for (const p of node.properties) {
      const name = p.name ? propertyName(p.name as ts.PropertyName) : undefined;
      if (name === undefined || !names.test(name)) continue;
      if (ts.isPropertyAssignment(p)) return p.initializer;
      if (ts.isShorthandPropertyAssignment(p)) return p.name;
    }
  }
  return undefined;
}

/** An option object (or a same-file constant holding one) among `args` with one of `names` at its top level. */
export function hasTopLevelOption(args: readonly ts.Expression[], names: RegExp, ctx: FileContext): boolean {
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
