import type { InspectionInput } from './buildDesign.js';

type InspectionFinding = InspectionInput['findings'][number];

/** The parts of a webhook or consumer finding that say why inspection believes it already deduplicates. */
interface DedupeFields {
  provider?: string;
  route?: string;
  broker?: string;
  queue?: string;
  dedupeEvidence?: { file: string; line: number; detail: string };
}

/**
 * The inspection findings the design credits as protection already in the code: existing idempotency, provider calls
 * that pass a key, and webhooks / consumers the inspector saw deduplicate, each with its evidence (where, and why it
 * counts: "atomic claim keyed by the id: …"). An entry already in this form passes through unchanged, so the
 * snapshot init records and a fresh inspection give the same list.
 */
export function creditedFindings(findings: readonly InspectionFinding[]): InspectionFinding[] {
  const credited = findings.filter((f) => f.kind === 'existing-idempotency' || (f.kind === 'payment' && (f as { hasProviderKey?: boolean }).hasProviderKey === true && (f as { keyPerAttempt?: boolean }).keyPerAttempt !== true));
  // One entry per place: a claim the existing-idempotency detector saw too (onConflictDoNothing) is credited once.
  const places = new Set(credited.map((f) => `${f.file}:${f.line}`));
  for (const finding of findings) {
    const evidence = (finding as DedupeFields).dedupeEvidence;
    if ((finding.kind !== 'webhook' && finding.kind !== 'consumer') || !evidence || places.has(`${evidence.file}:${evidence.line}`)) continue;
    places.add(`${evidence.file}:${evidence.line}`);
    const { provider, route, broker, queue } = finding as DedupeFields;
    const what =
      finding.kind === 'webhook'
        ? `${provider ? `${provider} webhook` : 'webhook'}${route ? ` ${route}` : ''} deduplicates by event id`
        : `${broker ?? 'queue'} consumer${queue ? ` of ${queue}` : ''} deduplicates by message id`;
    credited.push({
      kind: 'existing-idempotency',
      id: `${finding.kind}-dedupe ${finding.id}`,
      file: evidence.file,
      line: evidence.line,
      mechanism: finding.kind === 'webhook' ? 'event-id-dedupe' : 'message-id-dedupe',
      detail: `${what}: ${evidence.detail}`,
    });
  }
  return credited;
}
