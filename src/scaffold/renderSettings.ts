import type { ScaffoldView } from './scaffoldView.js';
import { houseLiteral } from './houseStyle.js';
import { commentText, propertyName } from './tsLiteral.js';

/**
 * settings.ts: every number and name the design decided, in one place the runtime reads; laid out as prettier prints
 * it (houseLiteral), so generate need not format it when no line overflows (httpTarget checks).
 */
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
    const head = `  ${propertyName(action.codeName)}: `;
    return `${head}${houseLiteral(settings, '  ', head.length, 1)},`;
  });
  return `// Decisions from the idempotency design "${commentText(view.title)}". The design document explains each value;
// change them there and regenerate, or edit here and keep the document in step.
import type { ActionSettings, IdempotencyPolicy } from './types.js';

export const POLICY: IdempotencyPolicy = ${houseLiteral(view.policy, '', 'export const POLICY: IdempotencyPolicy = '.length, 1)};

export const ACTIONS = {
${actions.join('\n')}
} as const satisfies Record<string, ActionSettings>;

export type ActionName = keyof typeof ACTIONS;

/** Prometheus names; the alert rules in idempotency-alerts.yml query these. */
export const METRIC_NAMES = ${houseLiteral(view.metricNames, '', 'export const METRIC_NAMES = '.length, ' as const;'.length)} as const;
`;
}
