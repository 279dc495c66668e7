import type { IdempotencyStore } from '../../../templates/scaffold/typescript/core/types.js';
import type { Materialized } from './materialize.js';

/** The contract suite as shipped (store-contract.ts), loaded from a generated scaffold so its imports resolve there. */
export interface StoreContractSubject {
  readonly store: IdempotencyStore;
  unavailable(): Promise<IdempotencyStore>;
  cleanup?(): Promise<number>;
  close(): Promise<void>;
}

export async function runStoreContract(
  scaffold: Pick<Materialized, 'load' | 'view' | 'remove'>,
  name: string,
  open: () => Promise<StoreContractSubject>,
): Promise<void> {
  const { runStoreContract: run } = await scaffold.load('store-contract');
  (run as (name: string, open: () => Promise<StoreContractSubject>) => void)(name, open);
}
