import { SEVERITIES, type CodeFinding, type Severity } from './types.js';

export function atLeast(severity: Severity, threshold: Severity): boolean {
  return SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(threshold);
}

/** Findings that fail the run: at or above the threshold, neither suppressed inline nor accepted in the baseline. */
export function blockingFindings(findings: readonly CodeFinding[], threshold: Severity): CodeFinding[] {
  return findings.filter((f) => !f.suppressed && !f.baselined && atLeast(f.severity, threshold));
}
