import type { CodeFinding } from '../types.js';

/** Machine report; also the baseline format. Paths are relative, so the file is the same on every machine. */
export function formatJson(findings: readonly CodeFinding[], filesScanned: number): string {
  const open = findings.filter((f) => !f.suppressed && !f.baselined);
  const summary = {
    filesScanned,
    error: open.filter((f) => f.severity === 'error').length,
    warning: open.filter((f) => f.severity === 'warning').length,
    note: open.filter((f) => f.severity === 'note').length,
    suppressed: findings.filter((f) => f.suppressed).length,
    baselined: findings.filter((f) => f.baselined).length,
  };
  return `${JSON.stringify({ version: 1, tool: 'idempotency-builder', summary, findings }, null, 2)}\n`;
}
