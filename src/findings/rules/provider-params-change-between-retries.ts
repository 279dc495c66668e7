import { ts } from 'ts-morph';
import { propertyName } from '../../inspect/parse/astHelpers.js';
import { providerCalls } from '../providerCalls.js';
import type { Rule, RuleReport } from '../types.js';
import { volatilePart } from '../volatile.js';

/** Providers compare the parameters of a repeated key (Stripe, Adyen, PayPal): a parameter taken from the clock makes the retry fail or, without a key, differ. */
export const providerParamsChangeBetweenRetries: Rule = {
  id: 'provider-params-change-between-retries',
  severity: 'warning',
  title: 'Provider parameter changes between retries',
  description:
    'A request parameter is computed from the server clock or a random source. A retry sends different parameters: ' +
    'with an idempotency key the provider rejects it (the key was used with other parameters), without one the two attempts ' +
    'create objects that differ, so neither side can tell they were the same intent.',
  fix: 'Compute the value once and store it with the intent (e.g. the order\'s createdAt or a trial end saved on the first attempt), then send the stored value on every attempt.',
  docsAnchor: 'finding-provider-params-change-between-retries',
  mentions: /stripe|adyen|paypal|square|mollie|paymentIntents|checkout\.sessions/i,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    for (const c of providerCalls(ctx)) {
      if (!c.params) continue;
      for (const prop of c.params.properties) {
        if (!ts.isPropertyAssignment(prop) && !ts.isShorthandPropertyAssignment(prop)) continue;
        const value = ts.isPropertyAssignment(prop) ? prop.initializer : prop.name;
        const volatile = volatilePart(value);
        if (!volatile) continue;
        out.push({
          node: prop,
          message: `${c.provider} ${c.operation} parameter \`${propertyName(prop.name) ?? prop.name.getText()}\` comes from \`${volatile.getText()}\`, so every retry sends a different value.`,
        });
      }
    }
    return out;
  },
};
