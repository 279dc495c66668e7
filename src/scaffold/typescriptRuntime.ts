import type { ScaffoldRole } from './types.js';

export interface StaticFile {
  readonly path: string;
  readonly template: string;
  readonly role: ScaffoldRole;
  readonly purpose: string;
}

/** The framework- and store-agnostic TypeScript runtime: copied verbatim into every scaffold. */
export const CORE_RUNTIME_FILES: readonly StaticFile[] = [
  { path: 'types.ts', template: 'typescript/core/types.ts', role: 'core', purpose: 'shared types, the store contract and its errors' },
  { path: 'core.ts', template: 'typescript/core/core.ts', role: 'core', purpose: 'claim → decide → execute → complete/release, framework-agnostic' },
  { path: 'fingerprint.ts', template: 'typescript/core/fingerprint.ts', role: 'fingerprint', purpose: 'canonical JSON, SHA-256 fingerprint, constant-time compare' },
  { path: 'identify.ts', template: 'typescript/core/identify.ts', role: 'core', purpose: 'method check, principal, key grammar and fingerprint, shared by every adapter' },
  { path: 'keys.ts', template: 'typescript/core/keys.ts', role: 'core', purpose: 'Idempotency-Key grammar, server-derived keys and provider key derivation' },
  { path: 'problems.ts', template: 'typescript/core/problems.ts', role: 'core', purpose: 'problem+json bodies for every refusal' },
];

/**
 * The prom-client metrics, one file for every store: the store gauges take a sampling function (observeStore(sample)),
 * and the cleanup counter exists only where settings.ts names one (stores with a cleanup job).
 */
export const METRICS_FILE: StaticFile = { path: 'metrics.ts', template: 'typescript/metrics/metrics.ts', role: 'metrics', purpose: 'prom-client metrics fed by the core; store gauges from a sampling function' };

/**
 * The in-memory store every scaffold carries, whatever its database: `store: createMemoryStore()` in the app's own
 * tests and local runs (one process; lost on restart).
 */
export const MEMORY_STORE_FILE: StaticFile = {
  path: 'memoryStore.ts',
  template: 'typescript/core/memoryStore.ts',
  role: 'store',
  purpose: 'in-memory store for your own tests and local runs: one process only, lost on restart, never production',
};

/** The store contract suite, shipped so a custom store can be checked against the same guarantees. */
export const CONTRACT_FILE: StaticFile = {
  path: 'store-contract.ts',
  template: 'typescript/core/storeContract.ts',
  role: 'tests',
  purpose: 'runStoreContract(): the black-box guarantees every store must give (point it at a custom store)',
};

export const POSTGRES_STORE_FILES: readonly StaticFile[] = [
  { path: 'pgStore.ts', template: 'typescript/postgres/pgStore.ts', role: 'store', purpose: 'PostgreSQL store: one-statement claim, fenced writes, bounded calls' },
  { path: 'pool.ts', template: 'typescript/postgres/pool.ts', role: 'store', purpose: 'a pg Pool with every wait bounded' },
  { path: 'saga.ts', template: 'typescript/postgres/saga.ts', role: 'saga', purpose: 'saga step tracker: resume and compensation' },
  { path: 'cleanup.ts', template: 'typescript/postgres/cleanup.ts', role: 'cleanup', purpose: 'batched deletion of expired records' },
  { path: 'pgStoreSample.ts', template: 'typescript/postgres/pgStoreSample.ts', role: 'metrics', purpose: "the store gauges' reading for observeStore: row estimate, oldest in-flight claim" },
];

/** The TypeScript runtime on PostgreSQL, as before stores were composable (kept for callers that list it). */
export const POSTGRES_RUNTIME_FILES: readonly StaticFile[] = [...CORE_RUNTIME_FILES, ...POSTGRES_STORE_FILES, METRICS_FILE];
