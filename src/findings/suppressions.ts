/**
 * `// idempotency-builder-ignore <rule-id>: reason` on the finding's line or the line above accepts it. A reason is
 * required so the next reader knows why; a comment without one suppresses nothing and is reported.
 */
const MARKER = /idempotency-builder-ignore\s+([\w-]+)\s*(?::\s*(.*?))?\s*(?:\*\/)?\s*$/;

export interface Suppression {
  ruleId: string;
  reason?: string;
  line: number;
}

export function readSuppressions(text: string): Suppression[] {
  if (!text.includes('idempotency-builder-ignore')) return [];
  const out: Suppression[] = [];
  text.split('\n').forEach((line, index) => {
    const m = MARKER.exec(line);
    if (m?.[1]) out.push({ ruleId: m[1], ...(m[2] ? { reason: m[2] } : {}), line: index + 1 });
  });
  return out;
}

export function suppressionFor(suppressions: readonly Suppression[], ruleId: string, line: number): Suppression | undefined {
  return suppressions.find((s) => s.ruleId === ruleId && (s.line === line || s.line === line - 1));
}
