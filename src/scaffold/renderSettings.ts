import type { ScaffoldView } from './scaffoldView.js';
import { commentText, propertyName, tsLiteral } from './tsLiteral.js';

/** settings.ts: every number and name the design decided, in one place the runtime reads. */
export function renderSettings(view: ScaffoldView): string {
  const actions = view.actions.map((action) => {
    const settings = {
      name: action.name,
      codeName: action.codeName,
      trigger: action.trigger,
      method: action.method,
      route: action.route,
      significantFields: action.significantFields,
      scope: action.scope,
      mode: action.mode,
      key: action.keyFrom ? { source: action.keySource, from: action.keyFrom } : { source: action.keySource },
      leaseMs: action.leaseMs,
      heartbeatMs: action.heartbeatMs,
      steps: action.steps,
    };
    return `  ${propertyName(action.codeName)}: ${tsLiteral(settings, '  ')},`;
  });
  return `// Decisions from the idempotency design "${commentText(view.title)}". The design document explains each value;
// change them there and regenerate, or edit here and keep the document in step.
import type { ActionSettings, IdempotencyPolicy } from './types.js';

export const POLICY: IdempotencyPolicy = ${tsLiteral(view.policy)};

export const ACTIONS = {
${actions.join('\n')}
} as const satisfies Record<string, ActionSettings>;

export type ActionName = keyof typeof ACTIONS;

/** Prometheus names; the alert rules in idempotency-alerts.yml query these. */
export const METRIC_NAMES = ${tsLiteral(view.metricNames)} as const;
`;
}
