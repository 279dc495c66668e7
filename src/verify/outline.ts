import type { DELIVERABLES } from '../render/document/types.js';
import type { OutlineBlock, ParsedPage } from './types.js';

/** The spec's 12 sections, recognised by heading text so a hand-edited document is judged fairly. */
export const SPEC_SECTIONS: ReadonlyArray<{ number: number; title: string; pattern: RegExp }> = [
  { number: 1, title: 'Action Analysis', pattern: /action analysis/i },
  { number: 2, title: 'Idempotency Key Design', pattern: /key design/i },
  { number: 3, title: 'Request Fingerprinting', pattern: /fingerprint/i },
  { number: 4, title: 'Concurrency Control', pattern: /concurrency/i },
  { number: 5, title: 'Partial Failure Recovery', pattern: /partial failure|failure recovery/i },
  { number: 6, title: 'Payment Provider Coordination', pattern: /payment/i },
  { number: 7, title: 'Multi-Step (Saga) Idempotency', pattern: /saga|multi-step/i },
  { number: 8, title: 'Security', pattern: /^security\b/i },
  { number: 9, title: 'Anti-Patterns to Avoid', pattern: /anti-?patterns?/i },
  { number: 10, title: 'Monitoring and Alerting', pattern: /monitoring|alerting/i },
  { number: 11, title: 'Test Scenarios', pattern: /test scenarios?/i },
  { number: 12, title: 'Build Order', pattern: /^build order/i },
];

/** Heading text for each final deliverable when the HTML data-deliverable marker is absent (Markdown). */
export const DELIVERABLE_PATTERNS: Readonly<Record<(typeof DELIVERABLES)[number]['id'], RegExp>> = {
  'action-map': /^action map\b/i,
  'store-ddl': /store ddl|\bddl\b/i,
  middleware: /middleware|interceptor/i,
  'fingerprint-utility': /fingerprint (utility|function)/i,
  'cleanup-job': /cleanup job|clean-up job/i,
  'test-suite': /test suite/i,
  'monitoring-config': /monitoring config/i,
  'build-order': /^build order/i,
  runbook: /runbook/i,
  'flow-diagrams': /flow diagrams?/i,
};

export interface LocatedBlock {
  block: OutlineBlock;
  file: string;
  /** Spec section number the block sits in, if any. */
  section?: number;
}

export function specSectionOf(heading: string): number | undefined {
  // Tolerates a stray backslash before the number ("\8. Security"), which some Markdown escapers emit.
  const text = heading.replace(/^\s*\\?\d+(\.\d+)*\.?\s*/, '');
  return SPEC_SECTIONS.find((s) => s.pattern.test(text))?.number;
}

/** All pages' blocks in reading order, each tagged with the spec section (level-2 heading) it falls under. */
export function locateBlocks(pages: readonly ParsedPage[]): LocatedBlock[] {
  const located: LocatedBlock[] = [];
  for (const page of pages) {
    let section: number | undefined;
    for (const block of page.blocks) {
      if (block.kind === 'heading' && block.level <= 2) section = block.level === 2 ? specSectionOf(block.text) : undefined;
      located.push({ block, file: page.file, section });
    }
  }
  return located;
}

/** The blocks after a heading, up to the next heading of the same or a higher level (or, with `group`, a higher level only). */
export function blocksUnder(located: readonly LocatedBlock[], index: number, group = false): LocatedBlock[] {
  const start = located[index];
  if (!start || start.block.kind !== 'heading') return [];
  const level = start.block.level;
  const out: LocatedBlock[] = [];
  for (let i = index + 1; i < located.length; i++) {
    const item = located[i]!;
    if (item.file !== start.file) break;
    if (item.block.kind === 'heading' && (group ? item.block.level < level : item.block.level <= level)) break;
    out.push(item);
  }
  return out;
}
