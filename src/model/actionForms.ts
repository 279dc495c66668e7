import type { ActionConfig } from '../config/schema.js';

export interface FormLocation {
  file: string;
  line: number;
}

/** The server-rendered forms that post to each HTTP action, by action name. */
export type ActionForms = Readonly<Record<string, readonly FormLocation[]>>;

/** An endpoint inspection found, as its finding carries it (the inspector's full finding satisfies this). */
interface EndpointFinding {
  kind: string;
  file: string;
  line: number;
  forms?: unknown;
}

/**
 * The forms that post to each HTTP action, where inspection found the action's route at its source (`file:line`) and
 * view templates posting to it (inspect/resolve/serverForms.ts). Recorded in the snapshot: generate and apply read no
 * templates.
 */
export function actionForms(actions: readonly Pick<ActionConfig, 'name' | 'trigger' | 'transport' | 'source'>[], findings: readonly EndpointFinding[]): Record<string, FormLocation[]> {
  const forms: Record<string, FormLocation[]> = {};
  for (const action of actions) {
    if (action.trigger !== 'http' || action.transport !== undefined || !action.source) continue;
    const at = /^(.*):(\d+)$/.exec(action.source);
    if (!at) continue;
    const found = findings.find((f) => f.kind === 'endpoint' && f.file === at[1] && f.line === Number(at[2]));
    if (Array.isArray(found?.forms) && found.forms.length > 0) forms[action.name] = (found.forms as FormLocation[]).map((f) => ({ file: f.file, line: f.line }));
  }
  return forms;
}
