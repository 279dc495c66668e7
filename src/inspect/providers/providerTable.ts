/** What repeating a provider call costs: the risk class the design and the findings rules read. */
import type { PaymentRisk } from '../types.js';
export type { PaymentRisk };

/** One SDK's operations, generated from the SDK itself by scripts/generate-provider-tables.mjs. */
export interface ProviderTable {
  provider: string;
  sdk: string;
  version: string;
  /** [resource path on the client object (dot-separated), method, HTTP verb, risk] */
  operations: ReadonlyArray<readonly [string, string, string, PaymentRisk]>;
}
