import { Counter, register as defaultRegistry, type Registry } from 'prom-client';
import type { ReconcileEvents } from './reconcile.js';

/** idempotency_reconciled_total{action,outcome,dry_run}: alert when 'left' keeps growing (the provider cannot tell). */
export function createReconcileMetrics(
  registry: Registry = defaultRegistry,
): ReconcileEvents & { readonly counter: Counter<string> } {
  const counter = new Counter({
    name: 'idempotency_reconciled_total',
    help: 'Stuck records the reconciliation job looked at, by outcome.',
    labelNames: ['action', 'outcome', 'dry_run'],
    registers: [registry],
  });
  return {
    counter,
    reconciled(action, outcome, dryRun) {
      counter.inc({ action, outcome, dry_run: String(dryRun) });
    },
  };
}
