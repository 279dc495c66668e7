import type { ActionConfig } from '../config/schema.js';
import type { ProjectContext, SourceContext } from './types.js';

/** The file an action's `source` ("src/routes/pay.ts:42") points at, and the line. */
export function actionSource(ctx: ProjectContext, action: ActionConfig): { source?: SourceContext; file?: string; line: number } {
  if (!action.source) return { line: 1 };
  const m = /^(.*?)(?::(\d+))?(?::\d+)?$/.exec(action.source);
  const file = (m?.[1] ?? action.source).replace(/^\.\//, '');
  const line = Number(m?.[2] ?? 1);
  const source = ctx.sources.find((s) => s.rel === file);
  return { ...(source ? { source } : {}), file, line };
}

/** Where a config problem is reported: the config file, on the line that names the action. */
export function configLocation(configText: string | undefined, actionName: string): { file: string; line: number } {
  const index = configText?.indexOf(JSON.stringify(actionName)) ?? -1;
  return { file: 'idempotency.config.json', line: index < 0 || !configText ? 1 : configText.slice(0, index).split('\n').length };
}
