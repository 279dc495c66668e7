import type { TextMeasure } from './measureText.js';
import { addMeasures } from './measureText.js';
import { pageLabel, pageNumbers, pageStem } from './pageNames.js';
import { SPLIT_THRESHOLDS } from './thresholds.js';

export type SplitMode = 'auto' | 'always' | 'never';

export interface SectionSize {
  id: string;
  /** 0 marks the overview, which opens the index page instead of a content page. */
  number: number;
  title: string;
  size: TextMeasure;
}

export interface PagePlan {
  /** 1-based reading position. */
  position: number;
  /** File name without extension, e.g. "02-keys-and-fingerprints". */
  stem: string;
  /** "Keys and fingerprints" */
  label: string;
  /** "2–3" */
  numbers: string;
  sectionIds: string[];
}

export type LayoutPlan =
  | { kind: 'single'; reason: string }
  | { kind: 'split'; reason: string; indexSectionIds: string[]; pages: PagePlan[] };

/**
 * Decides single file versus folder and, for a folder, which top-level sections share a page.
 * Sections are the unit: a table, diagram or code block is never separated from the prose around it
 * because a page boundary can only fall between sections.
 */
export function planLayout(sections: readonly SectionSize[], mode: SplitMode): LayoutPlan {
  const reason = splitReason(sections, mode);
  if (reason === undefined) return { kind: 'single', reason: singleReason(sections, mode) };
  const content = sections.filter((s) => s.number !== 0);
  const indexSectionIds = sections.filter((s) => s.number === 0).map((s) => s.id);
  const groups = groupSections(content);
  const pages = groups.map((group, i) => ({
    position: i + 1,
    stem: pageStem(i + 1, group),
    label: pageLabel(group),
    numbers: pageNumbers(group),
    sectionIds: group.map((s) => s.id),
  }));
  return { kind: 'split', reason, indexSectionIds, pages };
}

function navigableCount(sections: readonly SectionSize[]): number {
  const limit = SPLIT_THRESHOLDS.navigableScreens * SPLIT_THRESHOLDS.screenLines;
  return sections.filter((s) => s.size.screenLines > limit).length;
}

function splitReason(sections: readonly SectionSize[], mode: SplitMode): string | undefined {
  if (mode === 'never') return undefined;
  if (mode === 'always') return 'split: always';
  const total = addMeasures(...sections.map((s) => s.size));
  const t = SPLIT_THRESHOLDS;
  if (total.lines > t.maxLines) return `${total.lines} lines is past the ${t.maxLines}-line single-file limit`;
  if (total.bytes > t.maxBytes) return `${Math.round(total.bytes / 1024)} KB is past the ${t.maxBytes / 1024} KB single-file limit`;
  const navigable = navigableCount(sections);
  if (navigable > t.maxNavigableSections) return `${navigable} long sections is more than ${t.maxNavigableSections} to navigate on one page`;
  return undefined;
}

function singleReason(sections: readonly SectionSize[], mode: SplitMode): string {
  if (mode === 'never') return 'split: never';
  const total = addMeasures(...sections.map((s) => s.size));
  return `${total.lines} lines, ${Math.round(total.bytes / 1024)} KB and ${navigableCount(sections)} long sections fit one file`;
}

/**
 * Contiguous groups, 4–8 of them, balanced by screen length: minimising the sum of squared page
 * lengths merges short neighbours and leaves an enormous section alone on its page. If a page would
 * still come out shorter than a screenful, use fewer pages (down to the minimum).
 */
export function groupSections<T extends SectionSize>(sections: readonly T[]): T[][] {
  const t = SPLIT_THRESHOLDS;
  if (sections.length === 0) return [];
  const weights = sections.map((s) => Math.max(1, s.size.screenLines));
  const total = weights.reduce((a, b) => a + b, 0);
  let count = Math.min(sections.length, t.maxPages, Math.max(t.minPages, Math.round(total / t.targetPageLines)));
  for (;;) {
    const cuts = partition(weights, count);
    const groups = cuts.map(([from, to]) => sections.slice(from, to));
    const short = cuts.some(([from, to]) => weights.slice(from, to).reduce((a, b) => a + b, 0) < t.screenLines);
    if (!short || count <= Math.min(t.minPages, sections.length)) return groups;
    count -= 1;
  }
}

/** Optimal contiguous partition of weights into exactly `count` non-empty ranges, by sum of squares. */
function partition(weights: readonly number[], count: number): Array<[number, number]> {
  const n = weights.length;
  const prefix = [0];
  for (const w of weights) prefix.push(prefix[prefix.length - 1]! + w);
  const cost = (from: number, to: number) => (prefix[to]! - prefix[from]!) ** 2;
  // best[k][i]: cheapest split of the first i weights into k ranges; cut[k][i]: where the last range starts.
  const best = Array.from({ length: count + 1 }, () => new Array<number>(n + 1).fill(Infinity));
  const cut = Array.from({ length: count + 1 }, () => new Array<number>(n + 1).fill(0));
  best[0]![0] = 0;
  for (let k = 1; k <= count; k++) {
    for (let i = k; i <= n; i++) {
      for (let j = k - 1; j < i; j++) {
        const candidate = best[k - 1]![j]! + cost(j, i);
        if (candidate < best[k]![i]!) {
          best[k]![i] = candidate;
          cut[k]![i] = j;
        }
      }
    }
  }
  const ranges: Array<[number, number]> = [];
  for (let k = count, i = n; k > 0; k--) {
    const j = cut[k]![i]!;
    ranges.unshift([j, i]);
    i = j;
  }
  return ranges;
}
