import type { CodeFinding, Severity } from '../findings/types.js';
import type { ActionDesign } from './types.js';

/** A finding as the document shows it: where, what, how to fix, and whether the team has accepted it. */
export interface FindingDesign {
  ruleId: string;
  title: string;
  severity: Severity;
  /** `file:line` */
  location: string;
  file: string;
  line: number;
  message: string;
  fix: string;
  /** "open", "accepted: <reason>" (inline suppression) or "accepted in the baseline". */
  status: string;
  /** Names of the configured actions whose handler file holds the finding. */
  actions: string[];
}

const ORDER: Record<Severity, number> = { error: 0, warning: 1, note: 2 };

/** Pure: orders findings by severity then location, and ties each to the actions whose handler file it sits in. */
export function buildFindings(findings: readonly CodeFinding[], actions: readonly Pick<ActionDesign, 'name' | 'source'>[]): FindingDesign[] {
  return [...findings]
    .sort((a, b) => ORDER[a.severity] - ORDER[b.severity] || (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line) || (a.ruleId < b.ruleId ? -1 : 1))
    .map((f) => ({
      ruleId: f.ruleId,
      title: f.title,
      severity: f.severity,
      location: `${f.file}:${f.line}`,
      file: f.file,
      line: f.line,
      message: f.message,
      fix: f.fix,
      status: f.suppressed ? `accepted: ${f.suppressed.reason}` : f.baselined ? 'accepted in the baseline' : 'open',
      actions: actions.filter((a) => a.source !== undefined && sourceFile(a.source) === f.file).map((a) => a.name),
    }));
}

function sourceFile(source: string): string {
  return source.replace(/^\.\//, '').replace(/:\d+(:\d+)?$/, '');
}
