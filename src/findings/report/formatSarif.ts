import type { Log, ReportingDescriptor, Result } from 'sarif';
import { rules as allRules } from '../registry.js';
import type { CodeFinding, Rule } from '../types.js';

const INFORMATION_URI = 'https://www.npmjs.com/package/idempotency-builder';

/**
 * SARIF 2.1.0 for code-scanning services: every rule with its help text, every finding with a physical location and
 * a stable partial fingerprint; inline suppressions and baseline entries are kept as suppressed results.
 */
export function formatSarif(findings: readonly CodeFinding[], version: string, rules: readonly Rule[] = allRules): string {
  const descriptors: ReportingDescriptor[] = rules.map((rule) => ({
    id: rule.id,
    name: rule.id.replace(/(^|-)(\w)/g, (_, __: string, c: string) => c.toUpperCase()),
    shortDescription: { text: rule.title },
    fullDescription: { text: rule.description },
    help: { text: `${rule.description}\n\nFix: ${rule.fix}`, markdown: `${rule.description}\n\n**Fix:** ${rule.fix}` },
    helpUri: `${INFORMATION_URI}#${rule.docsAnchor}`,
    defaultConfiguration: { level: rule.severity },
    properties: { tags: ['idempotency', 'reliability'] },
  }));
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const results: Result[] = findings.map((f) => ({
    ruleId: f.ruleId,
    ...(index.has(f.ruleId) ? { ruleIndex: index.get(f.ruleId) } : {}),
    level: f.severity,
    message: { text: `${f.message} Fix: ${f.fix}` },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: encodeURI(f.file), uriBaseId: '%SRCROOT%' },
          region: { startLine: f.line, startColumn: f.column, ...(f.evidence ? { snippet: { text: f.evidence } } : {}) },
        },
      },
    ],
    partialFingerprints: { 'idempotencyBuilder/v1': f.fingerprint },
    ...(f.suppressed
      ? { suppressions: [{ kind: 'inSource' as const, justification: f.suppressed.reason }] }
      : f.baselined
        ? { suppressions: [{ kind: 'external' as const, justification: 'accepted in the audit baseline' }], baselineState: 'unchanged' as const }
        : {}),
  }));
  const log: Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'idempotency-builder', version, informationUri: INFORMATION_URI, rules: descriptors } }, results, columnKind: 'utf16CodeUnits' }],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
