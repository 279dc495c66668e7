import { DELIVERABLES, type DeliverableId } from '../render/document/types.js';
import { blocksUnder, DELIVERABLE_PATTERNS, SPEC_SECTIONS, type LocatedBlock } from './outline.js';
import type { Finding } from './types.js';

/** What each deliverable must carry beyond its heading. */
const NEEDS: Partial<Record<DeliverableId, 'code' | 'table'>> = {
  'action-map': 'table',
  'store-ddl': 'code',
  middleware: 'code',
  'fingerprint-utility': 'code',
  'cleanup-job': 'code',
  'test-suite': 'code',
  'monitoring-config': 'code',
};

/** All 12 spec sections and all 10 final deliverables are present (and the deliverables are not empty). */
export function verifySections(located: readonly LocatedBlock[], documentLabel: string): Finding[] {
  const findings: Finding[] = [];
  for (const spec of SPEC_SECTIONS) {
    if (!located.some((l) => l.section === spec.number && l.block.kind === 'heading' && l.block.level === 2)) {
      findings.push({ file: documentLabel, message: `section ${spec.number} "${spec.title}" is missing` });
    }
  }
  for (const deliverable of DELIVERABLES) {
    const index = findDeliverable(located, deliverable.id);
    if (index === -1) {
      findings.push({ file: documentLabel, message: `final deliverable "${deliverable.title}" is missing (no heading for it)` });
      continue;
    }
    const need = NEEDS[deliverable.id];
    const under = blocksUnder(located, index);
    const file = located[index]!.file;
    if (need && !under.some((l) => l.block.kind === need)) {
      findings.push({ file, message: `final deliverable "${deliverable.title}" has no ${need === 'code' ? 'code block' : 'table'} under its heading` });
    } else if (blocksUnder(located, index, true).length === 0) {
      // A heading that introduces sibling sub-headings (the runbook's entries) counts as its group.
      findings.push({ file, message: `final deliverable "${deliverable.title}" is an empty heading` });
    }
  }
  findings.push(...verifySagaDiagrams(located));
  return findings;
}

/**
 * The spec: "a compensation path that isn't drawn is a compensation path that isn't designed".
 * Each saga in section 7 needs its state machine (Mermaid block or SVG) under its heading.
 */
function verifySagaDiagrams(located: readonly LocatedBlock[]): Finding[] {
  const findings: Finding[] = [];
  located.forEach((item, index) => {
    if (item.section !== 7 || item.block.kind !== 'heading' || item.block.level < 3 || !/\bsaga$/i.test(item.block.text)) return;
    if (!blocksUnder(located, index).some((l) => l.block.kind === 'diagram')) {
      findings.push({ file: item.file, message: `"${item.block.text}" has no state machine diagram (Mermaid or SVG) under its heading` });
    }
  });
  return findings;
}

/** The heading marked data-deliverable (HTML) or, failing that, the first heading whose text names it. */
export function findDeliverable(located: readonly LocatedBlock[], id: DeliverableId): number {
  const marked = located.findIndex((l) => l.block.kind === 'heading' && l.block.deliverable === id);
  if (marked !== -1) return marked;
  const pattern = DELIVERABLE_PATTERNS[id];
  return located.findIndex((l) => l.block.kind === 'heading' && l.block.level >= 3 && pattern.test(l.block.text));
}
