import { ts } from 'ts-morph';
import { MONEY_MOVING, property, stripeCalls } from '../stripeCalls.js';
import type { Rule, Severity } from '../types.js';

/** What a duplicate of this operation does, which sets how loudly we say it. */
function impactOf(operation: string, params: ts.ObjectLiteralExpression | undefined): { severity: Severity; text: string } {
  if (operation === 'paymentIntents.create') {
    const confirm = params ? property(params, 'confirm') : undefined;
    return confirm && confirm.kind === ts.SyntaxKind.TrueKeyword
      ? { severity: 'error', text: 'charges the customer a second time (the intent is confirmed on creation)' }
      : { severity: 'warning', text: 'creates a second PaymentIntent, a second payment the client can confirm' };
  }
  if (operation.startsWith('subscription')) return { severity: 'error', text: 'starts a second subscription that bills the customer again' };
  if (MONEY_MOVING.has(operation)) return { severity: 'error', text: 'moves money a second time' };
  if (operation === 'customers.create') return { severity: 'warning', text: 'creates a second customer and splits the billing history' };
  return { severity: 'note', text: 'creates a second object' };
}

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
      .map((c) => {
        const impact = impactOf(c.operation, c.params);
        return { node: c.call, severity: impact.severity, message: `stripe ${c.operation} is called without an idempotencyKey: a retry ${impact.text}.` };
      });
  },
};
