import type { StaticFile } from '../typescriptRuntime.js';

/** The store-neutral saga tracker: steps are kept by the store through its StepStore methods. */
export const SAGA_FILE: StaticFile = { path: 'saga.ts', template: 'typescript/stores/saga.ts', role: 'saga', purpose: 'saga step tracker: resume and compensation, steps kept by the store' };

/** Metrics for stores other than PostgreSQL: the store gauges take a sampling function (observeStore(sample)). */
export const STORE_METRICS_FILE: StaticFile = { path: 'metrics.ts', template: 'typescript/stores/metrics.ts', role: 'metrics', purpose: 'prom-client metrics fed by the core; store gauges from a sampling function' };

/** What index.ts re-exports from the store-neutral saga.ts (in prettier's layout: too long for one line). */
export const SAGA_EXPORTS = `export {
  PermanentStepError,
  SagaCompensatedError,
  SagaTracker,
  type SagaStep,
  type StepContext,
  type StepStore,
} from './saga.js';`;

/**
 * The same metrics for stores that expire their own records (Redis, DynamoDB TTL): no cleanup job, so no counter
 * of what it deleted.
 */
export const EXPIRING_STORE_METRICS_FILE: StaticFile = { path: 'metrics.ts', template: 'typescript/stores/expiringMetrics.ts', role: 'metrics', purpose: 'prom-client metrics fed by the core; store gauges from a sampling function (records expire by TTL)' };
