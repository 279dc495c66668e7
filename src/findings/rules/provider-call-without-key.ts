import { MONEY_MOVING, stripeCalls } from '../stripeCalls.js';
import type { Rule } from '../types.js';

/** Stripe replays the first result for a repeated Idempotency-Key; without one, a retried request creates a second object. */
export const providerCallWithoutKey: Rule = {
  id: 'provider-call-without-key',
  severity: 'error',
  title: 'Provider call without an idempotency key',
  description:
    'A Stripe request that creates or moves something is sent without an idempotencyKey. When the response is lost ' +
    '(timeout, crash, SDK network retry after the request reached Stripe), running the code again creates a second object.',
  fix: 'Pass `{ idempotencyKey }` as the request options, derived from the local idempotency key or a business id that is the same on every attempt (e.g. `checkout:${orderId}`).',
  docsAnchor: 'finding-provider-call-without-key',
  mentions: /stripe/i,
  checkFile(ctx) {
    return stripeCalls(ctx.sf, ctx.text)
      .filter((c) => !c.key && !c.opaqueOptions && !c.operation.endsWith('.update'))
      .map((c) => ({
        node: c.call,
        severity: MONEY_MOVING.has(c.operation) ? 'error' : c.operation === 'customers.create' ? 'warning' : 'note',
        message: `stripe ${c.operation} is called without an idempotencyKey: a retry ${MONEY_MOVING.has(c.operation) ? 'moves money a second time' : c.operation === 'customers.create' ? 'creates a second customer and splits the billing history' : 'creates a second object'}.`,
      }));
  },
};
