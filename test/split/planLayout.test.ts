import { describe, expect, it } from 'vitest';
import { planLayout, SPLIT_THRESHOLDS, type SectionSize } from '../../src/render/layout/index.js';

const TITLES = ['Overview', 'Action Analysis', 'Idempotency Key Design', 'Request Fingerprinting', 'Concurrency Control', 'Partial Failure Recovery', 'Payment Provider Coordination', 'Multi-Step (Saga) Idempotency', 'Security', 'Anti-Patterns to Avoid', 'Monitoring and Alerting', 'Test Scenarios', 'Build Order', 'Operational Runbook'];

/** A design's 14 top-level sections with the given screen lengths (bytes follow at ~60 per line). */
function sections(lengths: readonly number[]): SectionSize[] {
  return TITLES.map((title, number) => {
    const lines = lengths[number] ?? 40;
    return { id: `s${number}`, number, title, size: { lines, bytes: lines * 60, screenLines: lines } };
  });
}

const SMALL = sections([50, 20, 45, 68, 160, 59, 6, 6, 15, 12, 90, 126, 18, 52]);
const LARGE = sections([60, 300, 120, 130, 400, 110, 30, 140, 20, 25, 95, 290, 20, 60]);

describe('planLayout', () => {
  it('keeps a small design in one file under auto, and never splits under never', () => {
    expect(planLayout(SMALL, 'auto').kind).toBe('single');
    expect(planLayout(LARGE, 'never').kind).toBe('single');
  });

  it('splits past the line or byte threshold, and says why', () => {
    const plan = planLayout(LARGE, 'auto');
    expect(plan.kind).toBe('split');
    expect(plan.reason).toMatch(/lines|KB/);
    const heavy = sections(TITLES.map(() => 20)).map((s) => ({ ...s, size: { ...s.size, bytes: (SPLIT_THRESHOLDS.maxBytes / 14) * 1.2 } }));
    expect(planLayout(heavy, 'auto')).toMatchObject({ kind: 'split', reason: expect.stringMatching(/KB/) });
  });

  it('splits when more than six long sections would have to be navigated on one page', () => {
    const long = SPLIT_THRESHOLDS.navigableScreens * SPLIT_THRESHOLDS.screenLines + 1;
    const many = sections(TITLES.map((_, i) => (i >= 1 && i <= 7 ? long : 5))).map((s) => ({ ...s, size: { ...s.size, bytes: 100 } }));
    expect(planLayout(many, 'auto')).toMatchObject({ kind: 'split', reason: expect.stringMatching(/7 long sections/) });
  });

  for (const [label, input] of [['small (split: always)', SMALL], ['large', LARGE]] as const) {
    it(`${label}: 4–8 pages of whole, contiguous sections, overview on the index`, () => {
      const plan = planLayout(input, 'always');
      if (plan.kind !== 'split') throw new Error('expected a split');
      expect(plan.pages.length).toBeGreaterThanOrEqual(4);
      expect(plan.pages.length).toBeLessThanOrEqual(8);
      expect(plan.indexSectionIds).toEqual(['s0']);
      // Every content section exactly once, in order: page breaks only between sections.
      expect(plan.pages.flatMap((p) => p.sectionIds)).toEqual(input.slice(1).map((s) => s.id));
      plan.pages.forEach((page, i) => expect(page.stem).toMatch(new RegExp(`^0${i + 1}-[a-z0-9-]+$`)));
      // No page shorter than a screenful.
      for (const page of plan.pages) {
        const length = page.sectionIds.reduce((sum, id) => sum + input.find((s) => s.id === id)!.size.screenLines, 0);
        expect(length).toBeGreaterThanOrEqual(SPLIT_THRESHOLDS.screenLines);
      }
    });
  }

  const HUGE_CONCURRENCY = sections([60, 300, 120, 130, 900, 110, 30, 140, 20, 25, 95, 290, 20, 60]);

  it('gives an enormous section a page of its own instead of piling neighbours onto it', () => {
    const plan = planLayout(HUGE_CONCURRENCY, 'always');
    if (plan.kind !== 'split') throw new Error('expected a split');
    expect(plan.pages.find((p) => p.sectionIds.includes('s4'))?.sectionIds).toEqual(['s4']);
  });

  it('names pages after their sections, numbered in reading order', () => {
    const plan = planLayout(HUGE_CONCURRENCY, 'always');
    if (plan.kind !== 'split') throw new Error('expected a split');
    expect(plan.pages.map((p) => p.stem)).toContain('03-concurrency');
    expect(plan.pages[0]!.numbers).toMatch(/^1(–\d+)?$/);
  });
});
