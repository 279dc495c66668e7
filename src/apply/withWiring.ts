import type { DesignModel } from '../model/types.js';
import type { ApplyRecord } from './applyRecord.js';

/** The design with each action's apply record attached: the document says what is wired and what is left to do. */
export function withWiring(model: DesignModel, record: ApplyRecord): DesignModel {
  if (record.actions.length === 0) return model;
  const byName = new Map(record.actions.map((a) => [a.action, a]));
  return {
    ...model,
    actions: model.actions.map((action) => {
      const entry = byName.get(action.name);
      if (!entry) return action;
      const manual = entry.manual.map((m) => ({ ...(m.file !== undefined ? { file: m.file } : {}), ...(m.line !== undefined ? { line: m.line } : {}), reason: m.reason }));
      return { ...action, wiring: { applied: entry.applied.map((a) => ({ file: a.file, summary: a.summary })), manual } };
    }),
  };
}
