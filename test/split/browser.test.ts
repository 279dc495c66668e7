import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';
import { ROOT } from '../helpers/fixtures.js';
import { generateFixture } from './generateFixture.js';

// Prints its reason when Chromium is absent (and fails under CI), so a skip is never silent.
const missing = chromiumMissing();
const SHOTS = path.join(ROOT, '.tmp', 'screenshots');

describe.skipIf(missing !== undefined)('split folder in headless Chromium', { timeout: 300_000 }, () => {
  it('clicks index → every page → back home through the nav links, with no missing file and the shared stylesheet applied', async () => {
    const { chromium } = await import('playwright-core');
    const project = await generateFixture('large-marketplace', { format: 'html' });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
      const failures: string[] = [];
      const network: string[] = [];
      page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`));
      page.on('request', (request) => {
        if (!request.url().startsWith('file:')) network.push(request.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error') failures.push(message.text());
      });
      await page.goto(`file://${path.join(project.documentPath, 'index.html')}`);
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SHOTS, 'split-index.png') });

      const pageLinks = await page.$$eval('nav.pages a', (links) => links.map((a) => ({ href: a.getAttribute('href') ?? '', text: a.textContent ?? '' })));
      expect(pageLinks.length).toBeGreaterThanOrEqual(4);
      const visited: string[] = [];
      for (const [i, link] of pageLinks.entries()) {
        // Navigate by clicking the top nav from wherever we are, like a reader would.
        await page.click(`nav.pages a[href="${link.href}"]`);
        await page.waitForLoadState('load');
        expect(path.basename(new URL(page.url()).pathname)).toBe(link.href);
        // The current page is plain text in the nav, not a link to itself.
        expect(await page.$eval('nav.pages .current', (el) => el.tagName.toLowerCase())).toBe('span');
        expect(await page.$eval('nav.pages .current', (el) => el.textContent)).toBe(link.text);
        expect(await page.$(`nav.pages a[href="${link.href}"]`)).toBeNull();
        // assets/styles.css loaded: the pager is laid out as a flex row only if the stylesheet applied.
        expect(await page.$eval('nav.pager', (el) => getComputedStyle(el).display)).toBe('flex');
        if (i === 1) await page.screenshot({ path: path.join(SHOTS, 'split-page.png'), fullPage: false });
        visited.push(link.href);
      }
      // Walk back to the start with "previous", then forward again with "next", ending home.
      for (let steps = 0; (await page.$('nav.pager a[rel="prev"]')) !== null; steps++) {
        expect(steps).toBeLessThan(20);
        await page.click('nav.pager a[rel="prev"]');
        await page.waitForLoadState('load');
      }
      expect(path.basename(new URL(page.url()).pathname)).toBe('index.html');
      const forward: string[] = [];
      while ((await page.$('nav.pager a[rel="next"]')) !== null) {
        await page.click('nav.pager a[rel="next"]');
        await page.waitForLoadState('load');
        forward.push(path.basename(new URL(page.url()).pathname));
      }
      expect(forward).toEqual(visited);
      await page.click('nav.pager a:text("Home")');
      expect(path.basename(new URL(page.url()).pathname)).toBe('index.html');
      // Deep links from the index land on an element that exists on the other page.
      const deliverables = await page.$$eval('#final-deliverables tbody tr td:nth-child(2) a', (links) => links.map((a) => a.getAttribute('href') ?? ''));
      expect(deliverables).toHaveLength(10);
      for (const href of deliverables) {
        await page.goto(`file://${path.join(project.documentPath, href.split('#')[0]!)}`);
        expect(await page.$(`[id="${href.split('#')[1]}"]`), href).not.toBeNull();
      }
      expect(failures).toEqual([]);
      expect(network).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
