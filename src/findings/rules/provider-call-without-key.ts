import { ts } from 'ts-morph';
import { impactOfOperation } from '../../model/impact.js';
import { httpProviderCalls, KEY_HEADERS, KEY_OPTIONS, keyOptionName, property, providerCalls, repeatsSafely } from '../providerCalls.js';
import type { Rule } from '../types.js';

const STABLE = 'derived from the local idempotency key or a business id that is the same on every attempt';
const FIX: Partial<Record<string, string>> = {
  stripe: `Pass \`{ idempotencyKey }\` as the request options, ${STABLE} (e.g. \`checkout:\${orderId}\`).`,
  adyen: `Pass \`{ idempotencyKey }\` as the request options (the second argument after the request), ${STABLE}; at most 64 characters.`,
  paypal: `Pass \`paypalRequestId\` in the request (it becomes the PayPal-Request-Id header), ${STABLE}.`,
  square: `Set \`idempotencyKey\` in the request body, ${STABLE}.`,
  mollie: `Pass \`idempotencyKey\` in the parameters, ${STABLE}.`,
};

/**
 * The provider replays the first result for a repeated key; without one, a retried request creates a second object.
 * Checked for every provider whose SDK takes a key (Stripe, Adyen, PayPal, Square, Mollie), from the generated tables,
 * and for REST calls made over raw HTTP (fetch, axios, got, …) to the providers whose API reads a key header.
 */
export const providerCallWithoutKey: Rule = {
  id: 'provider-call-without-key',
  severity: 'error',
  title: 'Provider call without an idempotency key',
  description:
    'A payment-provider request that creates or moves something is sent without an idempotency key. When the response is lost ' +
    '(timeout, crash, SDK network retry after the request reached the provider), running the code again creates a second object.',
  fix: 'Pass the provider\'s idempotency key (Stripe and Adyen: `{ idempotencyKey }` request options; PayPal: `paypalRequestId`; Square and Mollie: `idempotencyKey`), derived from the local idempotency key or a business id that is the same on every attempt (e.g. `checkout:${orderId}`).',
  docsAnchor: 'finding-provider-call-without-key',
  mentions: /stripe|adyen|paypal|square|mollie|paymentIntents|checkout\.sessions/i,
  checkFile(ctx) {
    return providerCalls(ctx)
      .filter((c) => KEY_OPTIONS[c.provider] && !c.key && !c.opaqueOptions && !repeatsSafely(c) && c.risk !== 'harmless-object')
      .map((c) => {
        const confirm = c.params ? property(c.params, 'confirm') : undefined;
        const impact = impactOfOperation(c.provider, c.operation, c.risk, { confirmsOnCreate: confirm?.kind === ts.SyntaxKind.TrueKeyword });
        return {
          node: c.call,
          severity: impact.severity,
          message: `${c.provider} ${c.operation} is called without ${c.provider === 'paypal' ? 'a paypalRequestId (PayPal-Request-Id)' : `an ${keyOptionName(c.provider)}`}: a retry ${impact.text}.`,
          fix: FIX[c.provider] ?? providerCallWithoutKey.fix,
        };
      })
      .concat(
        httpProviderCalls(ctx)
          .filter((c) => KEY_HEADERS[c.provider] && !c.keyed && c.verb === 'POST' && c.risk !== 'harmless-object')
          .map((c) => {
            const impact = impactOfOperation(c.provider, c.operation, c.risk);
            const header = KEY_HEADERS[c.provider]!;
            return {
              node: c.call,
              severity: impact.severity,
              message: `${c.provider} ${c.operation} is requested over HTTP without the ${header} header: a retry ${impact.text}.`,
              fix: `Send the \`${header}\` header with the request, ${STABLE}.`,
            };
          }),
      );
  },
};
