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
      actions: f.action !== undefined ? [f.action] : actions.filter((a) => concerns(a, f, spans, actions)).map((a) => a.name),
    }));
}

type Span = { file: string; from: number; to: number };

/**
 * Every action whose code holds the finding: a helper two handlers call belongs to both. An action whose handler was
 * not followed falls back to its handler file, minus the code other actions' handlers were followed into, so a
 * finding in one handler of a shared routes file is not also pinned on its unfollowed neighbour.
 */
function concerns(action: Pick<ActionDesign, 'name' | 'source'>, f: CodeFinding, spans: ReadonlyMap<string, ReadonlyArray<Span>>, actions: readonly Pick<ActionDesign, 'name' | 'source'>[]): boolean {
  if (f.file === 'idempotency.config.json') return f.message.includes(action.name);
  const inside = (list: ReadonlyArray<Span> | undefined) => (list ?? []).some((s) => s.file === f.file && f.line >= s.from && f.line <= s.to);
  const own = spans.get(action.name);
  if (own && own.length > 0) return inside(own);
  if (action.source === undefined || sourceFile(action.source) !== f.file) return false;
  return !actions.some((other) => other.name !== action.name && inside(spans.get(other.name)));
}

function sourceFile(source: string): string {
  return source.replace(/^\.\//, '').replace(/:\d+(:\d+)?$/, '');
}
