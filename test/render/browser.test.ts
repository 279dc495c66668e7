import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

const missing = chromiumMissing();

describe.skipIf(missing !== undefined)('HTML document in headless Chromium', () => {
  it.each(['express-stripe-payments', 'nestjs-adyen-saga'])('%s loads with no network request and no console error', async (name) => {
    const { chromium } = await import('playwright-core');
    const { text, dir } = await renderConfig(rawFixture(name));
    const file = path.join(dir, 'design.html');
    writeFileSync(file, text);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith('file:')) requests.push(request.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(`file://${file}`);
      expect(requests).toEqual([]);
      expect(errors).toEqual([]);
      // Nothing overflows the page horizontally: tables and code scroll inside their own boxes.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      // The table of contents jumps to real sections.
      const tocTargets = await page.$$eval('nav.toc a', (links) => links.map((a) => (a as HTMLAnchorElement).hash.slice(1)));
      for (const id of tocTargets) expect(await page.$(`[id="${id}"]`), id).not.toBeNull();
    } finally {
      await browser.close();
    }
  });
});
