import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

const missing = chromiumMissing();

/** What a reader on a 390 px phone sees: nothing wider than the screen, identifiers whole, diagram text readable. */
describe.skipIf(missing !== undefined)('HTML document at phone width (390 px)', () => {
  it('scrolls tables and diagrams inside their boxes, keeps inline code whole and diagram text legible', async () => {
    const { chromium } = await import('playwright-core');
    const { text, dir } = await renderConfig(rawFixture('express-stripe-payments'));
    const file = path.join(dir, 'design.html');
    writeFileSync(file, text);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(`file://${file}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      // An identifier without break opportunities (no `/`, `-`, space) renders on one line inside a table cell.
      const broken = await page.$$eval('td code', (codes) =>
        codes.filter((c) => /^[\w.:]+$/.test(c.textContent ?? '') && c.getClientRects().length > 1).map((c) => c.textContent),
      );
      expect(broken).toEqual([]);
      // Code titles (file paths) wrap instead of running off the page.
      const titleOverflow = await page.$$eval('.code-title', (titles) => titles.filter((t) => t.scrollWidth > t.clientWidth + 1).map((t) => t.textContent));
      expect(titleOverflow).toEqual([]);
      // Diagram labels stay at a readable size instead of shrinking with the screen.
      const smallest = await page.$$eval('figure.diagram svg text', (texts) => Math.min(...texts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0)));
      expect(smallest).toBeGreaterThanOrEqual(9);
    } finally {
      await browser.close();
    }
  });
});
