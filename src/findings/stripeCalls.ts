import { ts } from 'ts-morph';
import { STRIPE_OPERATIONS } from './stripeOperations.js';
import { accessChain, propertyName, unwrap } from '../inspect/parse/astHelpers.js';
import { calls, localInitializer } from './walk.js';

export interface StripeCall {
  call: ts.CallExpression;
  /** e.g. 'paymentIntents.create' */
  operation: string;
  /** The request parameters object, when it is a literal (or a local const holding one). */
  params?: ts.ObjectLiteralExpression;
  /** The `idempotencyKey` value passed in the request options, if any. */
  key?: ts.Expression;
  /** An options argument exists but is not a literal we can read: the key may be inside. */
  opaqueOptions: boolean;
}

/** Receivers that are the app's own data layer (`prisma.refunds.create`), never the Stripe client. */
const DATA_LAYER = /prisma|\bdb\b|database|repo|repository|model|knex|orm|mongo|sequelize|drizzle|supabase|\btx\b|\btrx\b/i;

/** Methods whose first argument is the object id: `paymentIntents.capture(id, params, options)`. */
const ID_FIRST = new Set(['capture', 'confirm', 'update', 'resume', 'pay', 'finalizeInvoice', 'createReversal', 'incrementAuthorization']);

/** Stripe SDK calls that create or move something, with their parameters and request options. */
export function stripeCalls(sf: ts.SourceFile, text: string): StripeCall[] {
  if (!/stripe/i.test(text)) return [];
  const importsStripe = /from\s+['"]stripe['"]|require\(\s*['"]stripe['"]\s*\)/.test(text);
  const out: StripeCall[] = [];
  for (const call of calls(sf)) {
    if (!ts.isPropertyAccessExpression(call.expression)) continue;
    const chain = accessChain(call.expression);
    const method = chain[chain.length - 1] ?? '';
    for (const op of STRIPE_OPERATIONS) {
      if (!op.methods.includes(method)) continue;
      const n = op.resource.length;
      if (chain.slice(-1 - n, -1).join('.') !== op.resource.join('.')) continue;
      const receiver = chain.slice(0, -1 - n).join('.');
      if (!receiver || DATA_LAYER.test(receiver)) break;
      if (!/stripe/i.test(receiver) && !(importsStripe && op.specific)) break;
      const first = ID_FIRST.has(method) ? 1 : 0;
      const params = literal(call.arguments[first]);
      const optionsArg = call.arguments[first + 1];
      const options = literal(optionsArg);
      const key = options ? property(options, 'idempotencyKey') : undefined;
      out.push({
        call,
        operation: `${op.resource.join('.')}.${method}`,
        ...(params ? { params } : {}),
        ...(key ? { key } : {}),
        opaqueOptions: optionsArg !== undefined && !options,
      });
      break;
    }
  }
  return out;
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

/** Operations whose duplicate moves money or bills someone, as opposed to a harmless extra draft or session. */
export const MONEY_MOVING = new Set([
  'paymentIntents.create', 'paymentIntents.confirm', 'paymentIntents.capture', 'paymentIntents.incrementAuthorization',
  'charges.create', 'charges.capture', 'refunds.create', 'payouts.create', 'transfers.create', 'transfers.createReversal',
  'invoices.pay', 'subscriptions.create', 'subscriptionItems.create', 'subscriptionSchedules.create', 'invoiceItems.create',
  'topups.create', 'creditNotes.create',
]);
