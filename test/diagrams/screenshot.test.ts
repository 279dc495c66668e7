import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFigures, renderFigures } from '../../src/diagrams/index.js';
import { expressStripe, nestjsAdyenSaga } from './models.js';
import { diagramPage } from './page.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.warn(`[diagrams] SKIPPED screenshot checks: no Chromium at ${CHROMIUM} (install it or set CHROMIUM_PATH)`);

interface Layout {
  scrollWidth: number;
  innerWidth: number;
  main: number;
  svgs: Array<{ id: string; width: number; height: number; viewBoxWidth: number }>;
}

/** Screenshots land here for a human to look at; the directory is git-ignored. */
const OUT = join(process.cwd(), '.tmp', 'diagrams');

describe.skipIf(!available)('diagrams in a real browser', () => {
  let browser: Browser;
  let pages: Record<'light' | 'dark', string>;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // Two fixtures' figures on one page: the id-collision case a real document has.
    const figures = [...(await renderFigures(buildFigures(nestjsAdyenSaga))), ...(await renderFigures(buildFigures(expressStripe))).slice(1)];
    mkdirSync(OUT, { recursive: true });
    pages = { light: join(OUT, 'page-light.html'), dark: join(OUT, 'page-dark.html') };
    writeFileSync(pages.light, diagramPage(figures, 'light'));
    writeFileSync(pages.dark, diagramPage(figures, 'dark'));
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [1000, 390]) {
    it(`fits the page width and stays legible at ${width}px, with no network request`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(pathToFileURL(pages.light).href, { waitUntil: 'load' });
      await page.screenshot({ path: join(OUT, `screenshot-${width}.png`), fullPage: true });

      expect(requests).toEqual([pathToFileURL(pages.light).href]);
      // Browser-side code as a string: the project's TypeScript lib has no DOM types, on purpose.
      const layout = (await page.evaluate(`({
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        main: document.querySelector('main').getBoundingClientRect().width,
        svgs: [...document.querySelectorAll('svg')].map((svg) => ({
          id: svg.id,
          width: svg.getBoundingClientRect().width,
          height: svg.getBoundingClientRect().height,
          viewBoxWidth: svg.viewBox.baseVal.width,
        })),
      })`)) as Layout;
      await page.close();

      expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
      expect(layout.svgs.map((s) => s.id)).toEqual(['request-flow-svg', 'saga-submit-order-svg', 'saga-checkout-svg']);
      for (const svg of layout.svgs) {
        expect(svg.width, svg.id).toBeLessThanOrEqual(layout.main);
        expect(svg.height, `${svg.id} keeps its aspect ratio`).toBeGreaterThan(100);
        // Node labels are 13 units in the viewBox; on a desktop column they must render at 12–14px.
        const nodeLabelPx = (13 * svg.width) / svg.viewBoxWidth;
        if (width >= 1000) {
          expect(nodeLabelPx, svg.id).toBeGreaterThanOrEqual(12);
          expect(nodeLabelPx, svg.id).toBeLessThanOrEqual(14.1);
        }
      }
    });
  }

  it('takes its colours from the document in dark mode', async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    await page.goto(pathToFileURL(pages.dark).href, { waitUntil: 'load' });
    await page.screenshot({ path: join(OUT, 'screenshot-dark.png'), fullPage: true });
    const colours = await page.evaluate(`({
      text: getComputedStyle(document.querySelector('#request-flow-svg g.node text')).fill,
      arrow: getComputedStyle(document.querySelector('#request-flow-svg marker polygon')).fill,
    })`);
    await page.close();
    expect(colours).toEqual({ text: 'rgb(230, 237, 243)', arrow: 'rgb(68, 147, 248)' });
  });
});
