import type { PaymentRisk } from '../inspect/types.js';

/**
 * What a second execution of one provider operation does, from the generated tables' risk class and the operation.
 * One definition for the findings rules (how loud) and the document (what a duplicate costs), so the document
 * never says a billing-portal session is "charged twice".
 */
export type ImpactClass = 'moves-money' | 'bills-again' | 'splits-account' | 'billable-object' | 'harmless';

export interface OperationImpact {
  impact: ImpactClass;
  severity: 'error' | 'warning' | 'note';
  /** Completes "a duplicate …": "moves money a second time". */
  text: string;
}

const PROVIDER_NAMES: Record<string, string> = { stripe: 'Stripe', adyen: 'Adyen', paypal: 'PayPal', braintree: 'Braintree', square: 'Square', mollie: 'Mollie', paddle: 'Paddle' };

export function providerName(provider: string): string {
  return PROVIDER_NAMES[provider] ?? provider;
}

/** `checkout.sessions.create` → "checkout session"; `v2/checkout/orders` → "checkout order"; `payments` → "payment". */
export function objectOf(operation: string): string {
  const parts = operation.split(/[./]/).filter((p) => p && !p.startsWith('{') && !/^v\d+$/.test(p));
  const resource = parts.length > 1 && /^(create|capture|confirm|pay|refund|cancel|update|del|authorize|reauthorize|incrementAuthorization|finalizeInvoice|createReversal)$/.test(parts[parts.length - 1]!) ? parts.slice(0, -1) : parts;
  return resource
    .map((p) => p.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase())
    .map((p, i, all) => (i === all.length - 1 ? p.replace(/ies$/, 'y').replace(/([^s])s$/, '$1') : p.replace(/([^s])s$/, '$1')))
    .join(' ');
}

export function impactOfOperation(provider: string, operation: string, risk: PaymentRisk | undefined, options: { confirmsOnCreate?: boolean } = {}): OperationImpact {
  const name = providerName(provider);
  const object = objectOf(operation);
  if (/subscription/i.test(operation) && /(^|\.)create$/.test(operation)) {
    return { impact: 'bills-again', severity: 'error', text: `starts a second subscription at ${name} that bills the customer again` };
  }
  if (operation === 'paymentIntents.create' && !options.confirmsOnCreate) {
    return { impact: 'billable-object', severity: 'warning', text: `creates a second PaymentIntent at ${name}, a second payment the client can confirm` };
  }
  if (risk === 'moves-money') return { impact: 'moves-money', severity: 'error', text: /refund/i.test(operation) ? `refunds a second time through ${name}` : `moves money a second time through ${name}${/[./]/.test(operation) ? ` (${object})` : ''}` };
  if (/(^|\.)customers?\.create$|createCustomer$|^customer$/.test(operation)) {
    return { impact: 'splits-account', severity: 'warning', text: `creates a second customer at ${name} and splits the billing history between the two` };
  }
  if (risk === 'billable-object') return { impact: 'billable-object', severity: 'warning', text: `creates a second ${object} at ${name}` };
  return { impact: 'harmless', severity: 'note', text: `creates another ${object} at ${name}, which is harmless: the extra one is simply never used` };
}

const ORDER: ImpactClass[] = ['moves-money', 'bills-again', 'splits-account', 'billable-object', 'harmless'];

/** The worst of several impacts (an action that creates a customer and then charges moves money). */
export function worstImpact(impacts: readonly OperationImpact[]): OperationImpact | undefined {
  return [...impacts].sort((a, b) => ORDER.indexOf(a.impact) - ORDER.indexOf(b.impact))[0];
}
