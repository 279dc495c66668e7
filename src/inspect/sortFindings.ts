import type { Finding } from './types.js';

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Deterministic order (file, line, kind, id) with code-unit comparison, so output never depends on locale. */
export function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort((a, b) => cmp(a.file, b.file) || a.line - b.line || cmp(a.kind, b.kind) || cmp(a.id, b.id));
}
