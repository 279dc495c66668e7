import type { CodeFinding } from '../types.js';

/** Human report: one block per finding, `file:line:col` first so terminals and editors make it a link. */
export function formatText(findings: readonly CodeFinding[], options: { color?: boolean; filesScanned: number }): string {
  const paint = (code: number, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const colour = { error: 31, warning: 33, note: 36 } as const;
  const open = findings.filter((f) => !f.suppressed && !f.baselined);
  const lines: string[] = [];
  for (const f of open) {
    lines.push(`${f.file}:${f.line}:${f.column}  ${paint(colour[f.severity], f.severity)}  ${f.message}  ${paint(2, f.ruleId)}`);
    if (f.evidence) lines.push(`    ${paint(2, '│')} ${f.evidence}`);
    lines.push(`    ${paint(2, 'fix:')} ${f.fix}`);
    lines.push('');
  }
  const count = (s: CodeFinding['severity']) => open.filter((f) => f.severity === s).length;
  const suppressed = findings.filter((f) => f.suppressed).length;
  const baselined = findings.filter((f) => f.baselined).length;
  const extra = [suppressed ? `${suppressed} suppressed inline` : '', baselined ? `${baselined} accepted in the baseline` : ''].filter(Boolean).join(', ');
  lines.push(
    open.length
      ? `${open.length} finding${open.length === 1 ? '' : 's'} (${count('error')} error, ${count('warning')} warning, ${count('note')} note) in ${options.filesScanned} files${extra ? `; ${extra}` : ''}.`
      : `No findings in ${options.filesScanned} files${extra ? ` (${extra})` : ''}.`,
  );
  return `${lines.join('\n')}\n`;
}
