import type { CodeFinding } from './types.js';

/**
 * A baseline is the JSON report of an earlier run (`audit --format json > baseline.json`): its fingerprints are the
 * findings a team has accepted. Matching counts occurrences, so a second copy of an accepted bug is still new.
 */
export function readBaseline(text: string, label: string): Map<string, number> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`${label} is not valid JSON: ${(error as Error).message}`);
  }
  const findings = (raw as { findings?: unknown }).findings;
  if (!Array.isArray(findings)) throw new Error(`${label} has no "findings" array; create it with \`idempotency-builder audit --format json > ${label}\`.`);
  const counts = new Map<string, number>();
  for (const f of findings) {
    const fp = (f as { fingerprint?: unknown }).fingerprint;
    if (typeof fp === 'string') counts.set(fp, (counts.get(fp) ?? 0) + 1);
  }
  return counts;
}

/** Marks findings the baseline accepts; returns new copies, the input is untouched. */
export function applyBaseline(findings: readonly CodeFinding[], baseline: ReadonlyMap<string, number>): CodeFinding[] {
  const left = new Map(baseline);
  return findings.map((f) => {
    const n = left.get(f.fingerprint) ?? 0;
    if (n <= 0) return { ...f };
    left.set(f.fingerprint, n - 1);
    return { ...f, baselined: true };
  });
}
