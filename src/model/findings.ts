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

/**
 * Pure: orders findings by severity then location, and ties each to the actions it concerns: those whose handler or
 * helpers (the line ranges the code facts give) hold it, else, when the code was not followed, those whose handler
 * file holds it.
 */
export function buildFindings(findings: readonly CodeFinding[], actions: readonly Pick<ActionDesign, 'name' | 'source'>[], spans: ReadonlyMap<string, ReadonlyArray<{ file: string; from: number; to: number }>> = new Map()): FindingDesign[] {
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
      actions: actions.filter((a) => concerns(a, f, spans.get(a.name))).map((a) => a.name),
    }));
}

function concerns(action: Pick<ActionDesign, 'name' | 'source'>, f: CodeFinding, spans: ReadonlyArray<{ file: string; from: number; to: number }> | undefined): boolean {
  if (f.file === 'idempotency.config.json') return f.message.includes(action.name);
  if (spans && spans.length > 0) return spans.some((s) => s.file === f.file && f.line >= s.from && f.line <= s.to);
  return action.source !== undefined && sourceFile(action.source) === f.file;
}

function sourceFile(source: string): string {
  return source.replace(/^\.\//, '').replace(/:\d+(:\d+)?$/, '');
}
