import { ts } from 'ts-morph';
import { accessChain, looseStringValue } from '../parse/astHelpers.js';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { PaymentProvider } from '../types.js';
import type { Detector, FileContext } from './detectorTypes.js';
import { messageSends } from './messageSends.js';
import { matchSdkCall, PROVIDER_MODULES } from './sdkCalls.js';

/** ORM and driver calls that add a row or document: Prisma, TypeORM, Sequelize, Mongoose, MongoDB, Knex, Drizzle, Kysely. */
const INSERT_METHODS = new Set(['create', 'createMany', 'insert', 'insertOne', 'insertMany', 'insertInto', 'bulkCreate', 'save']);

/** `.create()` on these is not a database write (a prototype, an HTTP or template client). */
const NOT_A_STORE = /^(Object|Reflect|axios|Handlebars|ky|got)$/;

const SQL_INSERT = /^\s*insert\s+into\b/i;

/**
 * Functions that insert a record: the seeds from which `insertsRecord` is reached, so `init` can tell an endpoint
 * that creates something (POST /articles) from one that only toggles or looks up.
 */
export const recordInserts: Detector = {
  name: 'record-inserts',
  mentions: /\.(?:create|createMany|insert|insertOne|insertMany|insertInto|bulkCreate|save)\s*\(|\binsert\s+into\b/i,
  detect(ctx, facts) {
    const providers = new Set<PaymentProvider>();
    for (const binding of ctx.index.imports.values()) {
      const provider = PROVIDER_MODULES[binding.module];
      if (provider) providers.add(provider);
    }
    // `client.messages.create(…)` (Twilio, Mailgun) sends a message: no record of the app's.
    const sends = new Set(/twilio|mailgun|resend/.test(ctx.text) ? messageSends(ctx.sf, ctx.index).map((m) => m.call) : []);
    for (const call of ctx.index.calls) {
      if (!insertsRecord(call, ctx) || matchSdkCall(call, ctx, providers) || sends.has(call)) continue;
      facts.insertFunctionKeys.push(...enclosingFunctions(call).keys);
    }
  },
};

/** A payment provider's `create` (stripe.refunds.create) is not the app's record: the caller filters those out. */
function insertsRecord(call: ts.CallExpression, ctx: FileContext): boolean {
  const consts = ctx.index.consts;
  const callee = call.expression;
  if (ts.isPropertyAccessExpression(callee) && INSERT_METHODS.has(callee.name.text)) {
    const receiver = accessChain(callee.expression).map((part) => part.replace(/\(\)$/, ''));
    return receiver.length > 0 && !receiver.some((part) => NOT_A_STORE.test(part));
  }
  // Raw SQL through a driver: client.query('INSERT INTO …'), db.execute(`insert into …`).
  return call.arguments.some((arg) => SQL_INSERT.test(looseStringValue(arg, consts) ?? ''));
}
