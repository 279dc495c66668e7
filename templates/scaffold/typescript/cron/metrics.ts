import { Counter, Histogram, register as defaultRegistry, type Registry } from 'prom-client';
import type { CronEvents } from './guard.js';

/** Prometheus metrics for scheduled jobs; alert on idempotency_cron_missed_slots_total increasing. */
export function createCronMetrics(registry: Registry = defaultRegistry): CronEvents {
  const registers = [registry];
  const slots = new Counter({
    name: 'idempotency_cron_slots_total',
    help: 'Scheduler fires per job and outcome (ran, duplicate, overlap, failed).',
    labelNames: ['job', 'outcome'],
    registers,
  });
  const missed = new Counter({
    name: 'idempotency_cron_missed_slots_total',
    help: 'Slots that never ran (missed) or whose run died before finishing (crashed).',
    labelNames: ['job', 'reason'],
    registers,
  });
  const duration = new Histogram({
    name: 'idempotency_cron_run_duration_ms',
    help: 'Duration of guarded runs, by outcome.',
    labelNames: ['job', 'outcome'],
    buckets: [10, 100, 1_000, 10_000, 60_000, 600_000],
    registers,
  });
  return {
    slot(job, outcome, durationMs) {
      slots.inc({ job, outcome });
      duration.observe({ job, outcome }, durationMs);
    },
    missed(job, _slot, reason) {
      missed.inc({ job, reason });
    },
  };
}
