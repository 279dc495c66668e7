import type { ScaffoldView } from './scaffoldView.js';
import { fitsHouseWidth, houseLiteral } from './houseStyle.js';
import { printModule } from './javascript/printModule.js';
import type { ModuleType } from './javascript/transpile.js';
import { commentText, propertyName } from './tsLiteral.js';
import type { JavaScriptToFormat } from './types.js';

/**
 * settings.ts: every number and name the design decided, in one place the runtime reads; laid out as prettier prints
 * it (houseLiteral), so generate need not format it when no line overflows (httpTarget checks).
 */
export function renderSettings(view: ScaffoldView): string {
  return `// Decisions from the idempotency design "${commentText(view.title)}". The design document explains each value;
// change them there and regenerate, or edit here and keep the document in step.
import type { ActionSettings, IdempotencyPolicy } from './types.js';

export const POLICY: IdempotencyPolicy = ${policyLiteral(view)};

export const ACTIONS = {
${actionEntries(view, '  ').join('\n')}
} as const satisfies Record<string, ActionSettings>;

export type ActionName = keyof typeof ACTIONS;

/** Prometheus names; the alert rules in idempotency-alerts.yml query these. */
export const METRIC_NAMES = ${metricNamesLiteral(view)} as const;
`;
}

/**
 * settings.ts as JavaScript, as the compiler and prettier would give it (the type-only header comment goes with the
 * type import, as it does when transpiled); undefined when a line would overflow the house style, which prettier
 * lays out instead.
 */
export function renderSettingsJavaScript(view: ScaffoldView, moduleType: ModuleType): string | JavaScriptToFormat | undefined {
  // POLICY and METRIC_NAMES are expanded in the TypeScript (more entries than fit a line), which prettier keeps, at
  // the same indentation: the same text. ACTIONS sits two deeper inside its JSDoc casts.
  const policy = policyLiteral(view);
  const metricNames = metricNamesLiteral(view);
  if (!policy.includes('\n') || !metricNames.includes('\n')) return undefined;
  const esm = `/** @type {import('./types.js').IdempotencyPolicy} */
export const POLICY = ${policy};

export const ACTIONS = /** @satisfies {Record<string, import('./types.js').ActionSettings>} */ (
  /** @type {const} */ ({
${actionEntries(view, '    ').join('\n')}
  })
);
/** @typedef {keyof typeof ACTIONS} ActionName */

/** Prometheus names; the alert rules in idempotency-alerts.yml query these. */
export const METRIC_NAMES = /** @type {const} */ (${metricNames});
`;
  // A value too wide for its line: the same JavaScript, for prettier to lay out.
  return fitsHouseWidth(esm) ? printModule(esm, moduleType) : { toFormat: printModule(esm, moduleType) };
}

const policyLiteral = (view: ScaffoldView) => houseLiteral(view.policy, '', 'export const POLICY: IdempotencyPolicy = '.length, 1);

/** The metric names, without the cleanup counter where the store has no cleanup job to feed it (TTL stores). */
const metricNamesLiteral = (view: ScaffoldView) =>
  houseLiteral(
    Object.fromEntries(Object.entries(view.metricNames).filter(([role]) => view.cleanupJob || role !== 'cleanupDeleted')),
    '',
    'export const METRIC_NAMES = '.length,
    ' as const;'.length,
  );

/** One `name: { … },` entry per action, at `indent`. */
function actionEntries(view: ScaffoldView, indent: string): string[] {
  return view.actions.map((action) => {
    const settings = {
      name: action.name,
      codeName: action.codeName,
      trigger: action.trigger,
      method: action.method,
      route: action.route,
      significantFields: action.significantFields,
      scope: action.scope,
      mode: action.mode,
      ...(action.rollout ? { rollout: action.rollout } : {}),
      key: action.keyFrom ? { source: action.keySource, from: action.keyFrom } : action.keyField ? { source: action.keySource, field: action.keyField } : { source: action.keySource },
      leaseMs: action.leaseMs,
      heartbeatMs: action.heartbeatMs,
      steps: action.steps,
    };
    const head = `${indent}${propertyName(action.codeName)}: `;
    return `${head}${houseLiteral(settings, indent, head.length, 1)},`;
  });
}
