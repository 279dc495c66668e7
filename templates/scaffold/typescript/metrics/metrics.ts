import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry } from 'prom-client';
import { METRIC_NAMES } from './settings.js';
import type { IdempotencyEvents } from './types.js';

/**
 * Prometheus metrics for the idempotency layer, fed by the core's events. Labels carry the action name only;
 * the per-principal counter carries a short hash, never the id itself, and never a key or fingerprint.
 */
export function createIdempotencyMetrics(
  registry: Registry = defaultRegistry,
): IdempotencyEvents & { readonly registry: Registry; cleanupDeleted(deleted: number): void } {
  const registers = [registry];
  const requests = new Counter({
    name: METRIC_NAMES.requests,
    help: 'Requests that reached an idempotency check.',
    labelNames: ['action'],
    registers,
  });
  const duplicates = new Counter({
    name: METRIC_NAMES.duplicatesBlocked,
    help: 'Duplicate requests answered without running the action (replay or in-flight).',
    labelNames: ['action', 'outcome'],
    registers,
  });
  const lockTimeouts = new Counter({
    name: METRIC_NAMES.lockTimeouts,
    help: 'Claims whose lease lapsed before completion (crashed or stalled workers).',
    labelNames: ['action'],
    registers,
  });
  const mismatches = new Counter({
    name: METRIC_NAMES.fingerprintMismatches,
    help: 'Keys reused with a different request.',
    labelNames: ['action'],
    registers,
  });
  const duration = new Histogram({
    name: METRIC_NAMES.processingDuration,
    help: 'Time from claim to completion or release, in milliseconds.',
    labelNames: ['action', 'outcome'],
    buckets: [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000],
    registers,
  });
  // Unbounded by nature (one series per active principal): keep the hash short and scrape retention modest.
  const keysCreated = new Counter({
    name: METRIC_NAMES.keysCreatedPerUser,
    help: 'New keys claimed, per principal (hashed).',
    labelNames: ['action', 'principal'],
    registers,
  });
  const orphanReclaims = new Counter({
    name: METRIC_NAMES.orphanReclaims,
    help: 'Lapsed claims taken over by a retry.',
    labelNames: ['action'],
    registers,
  });
  const storeErrors = new Counter({
    name: METRIC_NAMES.storeErrors,
    help: 'Store calls that failed or timed out (requests answered 503, or run anyway in log-only rollout).',
    labelNames: ['operation'],
    registers,
  });

  const outcomeUnknown = new Counter({
    name: METRIC_NAMES.outcomeUnknown,
    help: 'Actions that ran but whose result could not be recorded (the client was told the outcome is unknown).',
    labelNames: ['action'],
    registers,
  });
  const logOnly = new Counter({
    name: METRIC_NAMES.logOnly,
    help: 'Log-only rollout: requests that ran although enforcement would have replayed or refused them.',
    labelNames: ['action', 'would'],
    registers,
  });
  // Only a store with a cleanup job names this counter in settings.ts; one that expires its records itself (TTL)
  // has nothing to count, so it gets no series that would stay at 0.
  const cleanupName = (METRIC_NAMES as { readonly cleanupDeleted?: string }).cleanupDeleted;
  const cleanupDeleted =
    cleanupName === undefined
      ? undefined
      : new Counter({ name: cleanupName, help: 'Expired records deleted by the cleanup job.', registers });

  return {
    registry,
    /**
     * Call with the result of deleteExpiredKeys when cleanup runs inside the app (cleanup-job.ts prints or pushes it).
     * Does nothing for a store without a cleanup job.
     */
    cleanupDeleted: (deleted: number) => cleanupDeleted?.inc(deleted),
    request: (action) => requests.inc({ action }),
    claimed(action, principal, reclaimed) {
      if (reclaimed === 'no' || reclaimed === 'expired') {
        keysCreated.inc({
          action,
          principal: createHash('sha256').update(principal).digest('hex').slice(0, 8),
        });
      }
      if (reclaimed === 'orphan') {
        lockTimeouts.inc({ action });
        orphanReclaims.inc({ action });
      }
    },
    replayed: (action) => duplicates.inc({ action, outcome: 'replayed' }),
    inFlight: (action) => duplicates.inc({ action, outcome: 'in-flight' }),
    mismatch: (action) => mismatches.inc({ action }),
    finished(action, outcome, durationMs) {
      duration.observe({ action, outcome }, durationMs);
      if (outcome === 'lease-lost') lockTimeouts.inc({ action });
      if (outcome === 'outcome-unknown') outcomeUnknown.inc({ action });
    },
    storeError: (operation) => storeErrors.inc({ operation }),
    logOnly: (action, would) => logOnly.inc({ action, would }),
  };
}

/** What observeStore reads from the store at scrape time; either value may be left out. */
export interface StoreSample {
  readonly size?: number | undefined;
  readonly oldestInFlightSeconds?: number | undefined;
}

/**
 * Gauges read from the store at scrape time through `sample` (a cheap query of your store: a row estimate, the age
 * of the oldest PROCESSING record; on PostgreSQL, pgStoreSample(pool) from pgStoreSample.ts). A failed read leaves
 * the last value in place.
 */
export function observeStore(sample: () => Promise<StoreSample>, registry: Registry = defaultRegistry): void {
  let pending: Promise<StoreSample | undefined> | undefined;
  // A scrape collects both gauges at once (every prom-client release starts them in the same turn): they share the
  // read under way, and the next scrape starts a fresh one.
  const read = () => {
    if (pending === undefined) {
      pending = sample()
        .catch(() => undefined)
        .finally(() => (pending = undefined));
    }
    return pending;
  };
  scrapedGauge(
    registry,
    METRIC_NAMES.storeSize,
    'Approximate number of records in the idempotency store.',
    async () => (await read())?.size,
  );
  scrapedGauge(
    registry,
    METRIC_NAMES.oldestInFlightAge,
    'Age in seconds of the oldest claim still PROCESSING.',
    async () => (await read())?.oldestInFlightSeconds,
  );
}

/**
 * A gauge `read` sets when Prometheus scrapes. prom-client 13+ awaits the `collect` hook at each scrape; 11 and 12
 * have no such hook and read metrics synchronously, so there each scrape starts a read and reports the value the
 * previous one left (one scrape behind). A failed or empty read leaves the last value in place.
 */
function scrapedGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<number | undefined>,
): void {
  const refresh = async (): Promise<void> => {
    const value = await read().catch(() => undefined);
    if (value !== undefined) gauge.set(value);
  };
  // A variable, not a literal: typings before prom-client 13 declare no `collect` and would reject it there.
  const config = { name, help, registers: [registry], collect: refresh };
  const gauge = new Gauge(config);
  // prom-client 13+ keeps `collect` on the metric and calls it; older releases drop it, and their registry reads
  // each metric through get() (which prom-client 12's typings leave out).
  if (Reflect.get(gauge, 'collect') !== refresh) {
    const get = Reflect.get(gauge, 'get') as () => unknown;
    Reflect.set(gauge, 'get', () => {
      void refresh();
      return get.call(gauge);
    });
  }
}
