import { adyenTable } from './adyen.js';
import { braintreeTable } from './braintree.js';
import { mollieTable } from './mollie.js';
import { paddleTable } from './paddle.js';
import { paypalTable } from './paypal.js';
import type { PaymentRisk, ProviderTable } from './providerTable.js';
import { squareTable } from './square.js';
import { stripeTable } from './stripe.js';

export type { PaymentRisk, ProviderTable } from './providerTable.js';

/** Adding a provider is one generated file plus one line here. */
export const providerTables: ProviderTable[] = [stripeTable, adyenTable, paypalTable, braintreeTable, squareTable, mollieTable, paddleTable];

export interface ProviderOperation {
  provider: string;
  /** Resource path on the client, e.g. ['checkout', 'sessions'] or ['checkout', 'PaymentsApi']. */
  resource: string[];
  method: string;
  verb: string;
  risk: PaymentRisk;
}

/** method name → operations with that name, per provider: the lookup a call site starts from. */
export const operationsByMethod: Map<string, ProviderOperation[]> = (() => {
  const out = new Map<string, ProviderOperation[]>();
  for (const table of providerTables) {
    for (const [resource, method, verb, risk] of table.operations) {
      const list = out.get(method) ?? [];
      list.push({ provider: table.provider, resource: resource.split('.'), method, verb, risk });
      out.set(method, list);
    }
  }
  return out;
})();
