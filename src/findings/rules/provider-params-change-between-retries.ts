import { ts } from 'ts-morph';
import { propertyName } from '../../inspect/parse/astHelpers.js';
import { providerCalls, type ProviderCall } from '../providerCalls.js';
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
  fix:
    'Send a value that is the same on every attempt: a time from the handler context\'s `startedAt` (when the key was first ' +
    'claimed) or from the intent\'s stored data (the order\'s createdAt), never from the clock; a label or reference derived ' +
    'from the idempotency key. `apply` makes these edits in the handlers it wires.',
  docsAnchor: 'finding-provider-params-change-between-retries',
  mentions: /stripe|adyen|paypal|square|mollie|paymentIntents|checkout\.sessions/i,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    for (const c of providerCalls(ctx)) {
      for (const param of volatileParams(c)) {
        const rule = stableParamRule(param.name);
        out.push({
          node: param.property,
          message: `${c.provider} ${c.operation} parameter \`${param.name}\` comes from \`${param.volatile.getText()}\`, so every retry sends a different value.`,
          ...(rule ? { fix: `\`${param.name}\` ${rule.reason}` } : {}),
        });
      }
    }
    return out;
  },
};

/**
 * What a per-attempt parameter is, by its name: the rule's fix text and apply's stable-params transform read the same
 * table. A label (metadata, a description) only has to be the same on every attempt, and a merchant reference only
 * unique per intent as well, so apply derives both from the idempotency key; a time the provider acts on (an expiry, a
 * trial end) counts from the key's start time (`startedAt`), which apply substitutes for a clock read.
 */
export const STABLE_PARAM_RULES: ReadonlyArray<{ kind: 'label' | 'reference' | 'time'; test: RegExp; reason: string }> = [
  {
    kind: 'time',
    test: /(^|_)(at|date|time|end|start|until|deadline|anchor)$|[a-z](At|Date|Time|End|Start|Until|Deadline|Anchor)$|^expir|^(trial|period|billing_cycle)/,
    reason:
      'is a time the provider acts on: count it from `idempotencyOf(request).startedAt` (when the key was first claimed, the same on every attempt) ' +
      'or from a time stored with the intent, never from the clock; `apply` rewrites a clock read there in the handlers it wires, and leaves one mixed with a random value to you.',
  },
  {
    kind: 'label',
    test: /^(metadata|description|statement_descriptor(_suffix)?|statementDescriptor(Suffix)?|client_reference_id|clientReferenceId|custom_?[iI]d|soft_?[dD]escriptor|note(_to_payer|ToPayer)?|memo|label)$/,
    reason: 'is a label: derive it from the idempotency key (the same on every attempt of the intent) instead of the clock or a random id; `apply` does this in the handlers it wires.',
  },
  {
    // The merchant's own name for this one intent (Adyen's reference, Stripe's transfer_group, an invoice id): a clock
    // or random value there only had to be unique per intent, which the derived key is, and stays on every attempt.
    kind: 'reference',
    test: /^(reference|merchantReference|merchantOrderReference|merchant_reference|transfer_group|transferGroup|invoice_id|invoiceId)$/,
    reason: 'is the merchant reference of this intent: derive it from the idempotency key (unique per intent and the same on every attempt) instead of the clock or a random id; `apply` does this in the handlers it wires.',
  },
];

export function stableParamRule(name: string): (typeof STABLE_PARAM_RULES)[number] | undefined {
  return STABLE_PARAM_RULES.find((rule) => rule.test.test(name));
}

/** The request's own parameters whose value changes per attempt, with the first part that does. */
export function volatileParams(c: Pick<ProviderCall, 'params'>): Array<{ name: string; property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment; volatile: ts.Node }> {
  const out: Array<{ name: string; property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment; volatile: ts.Node }> = [];
  for (const prop of c.params?.properties ?? []) {
    if (!ts.isPropertyAssignment(prop) && !ts.isShorthandPropertyAssignment(prop)) continue;
    const volatile = volatilePart(ts.isPropertyAssignment(prop) ? prop.initializer : prop.name);
    if (volatile) out.push({ name: propertyName(prop.name) ?? prop.name.getText(), property: prop, volatile });
  }
  return out;
}
