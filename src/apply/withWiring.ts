import type { FindingDesign } from '../model/findings.js';
import type { DesignModel } from '../model/types.js';
import type { ApplyRecord } from './applyRecord.js';

/**
 * The design with each action's apply record attached: the document says what is wired and what is left to do. The
 * findings are init's reading of the code before apply; an action apply wired is no longer "not wrapped", so that
 * finding goes (the others stay until init reads the code again: apply fixes them only where it says so).
 */
export function withWiring(model: DesignModel, record: ApplyRecord): DesignModel {
  if (record.actions.length === 0) return model;
  const byName = new Map(record.actions.map((a) => [a.action, a]));
  const wired = new Set(record.actions.filter((a) => a.applied.length > 0).map((a) => a.action));
  // The rule reports each action on its own and ties the finding to it alone.
  const stale = (finding: FindingDesign) => finding.ruleId === 'action-not-wrapped' && finding.actions.length === 1 && wired.has(finding.actions[0] ?? '');
  return {
    ...model,
    findings: model.findings.filter((finding) => !stale(finding)),
    actions: model.actions.map((action) => {
      const entry = byName.get(action.name);
      if (!entry) return action;
      const manual = entry.manual.map((m) => ({ ...(m.file !== undefined ? { file: m.file } : {}), ...(m.line !== undefined ? { line: m.line } : {}), reason: m.reason }));
      return { ...action, findings: action.findings.filter((finding) => !stale(finding)), wiring: { applied: entry.applied.map((a) => ({ file: a.file, summary: a.summary })), manual } };
    }),
  };
}
