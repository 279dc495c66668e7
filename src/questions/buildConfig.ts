import { SCHEMA_REF } from '../config/load.js';
import type { Resolution } from './resolveAnswers.js';

/** Keys init does not ask about survive a re-run untouched. */
const KEPT_KEYS = ['title', 'split', 'conflictStatus', 'inFlight', 'expectedVolumePerDay'] as const;

export function buildConfig(existing: Record<string, unknown>, resolution: Resolution, reasked: boolean): Record<string, unknown> {
  const { answers } = resolution;
  // A re-asked run replaces the old assumptions; a non-interactive run still relies on those its config carried.
  const previous = !reasked && Array.isArray(existing['assumptions']) ? (existing['assumptions'] as unknown[]).filter((a): a is string => typeof a === 'string') : [];
  const assumptions = [...new Set([...previous, ...resolution.assumptions])];
  const kept = Object.fromEntries(KEPT_KEYS.filter((key) => existing[key] !== undefined).map((key) => [key, existing[key]]));
  // A form's double submit replaces the page with the second request's answer: it should be the first one's, not a 409.
  if (kept['inFlight'] === undefined && answers.actions.some((a) => a.key?.field !== undefined)) kept['inFlight'] = 'wait';
  return {
    $schema: typeof existing['$schema'] === 'string' ? existing['$schema'] : SCHEMA_REF,
    ...kept,
    format: answers.format,
    output: answers.output,
    actions: answers.actions,
    stack: answers.stack,
    retrySources: answers.retrySources,
    payments: answers.payments,
    concurrency: answers.concurrency,
    retention: answers.retention,
    detectionLatency: answers.detectionLatency,
    scaffold: answers.scaffold,
    ...(assumptions.length > 0 ? { assumptions } : {}),
  };
}
