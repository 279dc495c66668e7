import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyPath } from '../../src/verify/index.js';
import { generateFixture } from './generateFixture.js';

const PAGE = /^0[1-8]-[a-z0-9-]+\.(html|md)$/;

describe('split folders from generate', () => {
  for (const format of ['html', 'md'] as const) {
    const index = format === 'html' ? 'index.html' : 'README.md';

    it(`${format}: the large marketplace config splits on its own into an index and 4–8 numbered pages`, async () => {
      const project = await generateFixture('large-marketplace', { format });
      expect(project.split).toBe(true);
      expect(existsSync(path.join(project.dir, `docs/idempotency-design.${format}`))).toBe(false);
      const files = readdirSync(project.documentPath);
      const pages = files.filter((f) => PAGE.test(f));
      expect(files).toContain(index);
      expect(pages.length).toBeGreaterThanOrEqual(4);
      expect(pages.length).toBeLessThanOrEqual(8);
      if (format === 'html') expect(readdirSync(path.join(project.documentPath, 'assets'))).toEqual(['styles.css']);
      expect(await verifyPath(project.documentPath)).toEqual([]);
    });

    it(`${format}: a one-action design stays a single file under auto`, async () => {
      const project = await generateFixture('minimal-one-action', { format });
      expect(project.split).toBe(false);
      expect(await verifyPath(project.documentPath)).toEqual([]);
    });

    it(`${format}: split always on a small design yields a valid folder that still verifies after being copied elsewhere`, async () => {
      const project = await generateFixture('minimal-one-action', { format, split: 'always' });
      expect(project.split).toBe(true);
      expect(await verifyPath(project.documentPath)).toEqual([]);
      const elsewhere = path.join(mkdtempSync(path.join(tmpdir(), 'ib-moved-')), 'design');
      cpSync(project.documentPath, elsewhere, { recursive: true });
      expect(await verifyPath(elsewhere)).toEqual([]);
    });
  }

  it('html: every page shares the stylesheet, header, footer date and the page list with itself as plain text', async () => {
    const project = await generateFixture('large-marketplace', { format: 'html' });
    const files = readdirSync(project.documentPath).filter((f) => f.endsWith('.html')).sort();
    const headers = new Set<string>();
    for (const file of files) {
      const html = readFileSync(path.join(project.documentPath, file), 'utf8');
      expect(html).toContain('<link rel="stylesheet" href="assets/styles.css">');
      // Page styling comes only from the shared sheet (diagrams keep their own scoped SVG styles).
      expect(html.slice(0, html.indexOf('</head>'))).not.toContain('<style>');
      expect(html).toContain('<time datetime="2026-12-02">');
      headers.add(html.slice(html.indexOf('<header'), html.indexOf('</header>')));
      const nav = html.slice(html.indexOf('<nav class="pages"'), html.indexOf('</nav>'));
      expect(nav).toContain(`<span class="current" aria-current="page">`);
      expect(nav).not.toContain(`href="${file}"`);
      for (const other of files.filter((f) => f !== file)) expect(nav).toContain(`href="${other}"`);
      const pager = html.slice(html.indexOf('<nav class="pager"'));
      if (file !== 'index.html') expect(pager).toContain('href="index.html">Home</a>');
    }
    expect(headers.size).toBe(1);
  });

  it('html: the index holds the action map, the full contents with summaries and where each deliverable lives', async () => {
    const project = await generateFixture('large-marketplace', { format: 'html' });
    const html = readFileSync(path.join(project.documentPath, 'index.html'), 'utf8');
    expect(html).toContain('<h2>Protected actions</h2>');
    // The first page's name follows the layout (which follows the content); it holds the action analysis.
    expect(html).toMatch(/href="01-actions[a-z-]*\.html#checkoutorder"/);
    expect(html).toContain('<span class="summary">');
    expect(html).toContain('<h2>Final deliverables</h2>');
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) expect(html).toContain(`<tr><td>${n}</td><td><a href="0`);
  });

  it('md: mermaid blocks are exactly those of the single file, and pages carry the nav line and pager', async () => {
    const split = await generateFixture('large-marketplace', { format: 'md' });
    const single = await generateFixture('large-marketplace', { format: 'md', split: 'never' });
    const mermaid = (text: string) => [...text.matchAll(/```mermaid\n[\s\S]*?```/g)].map((m) => m[0]);
    const files = readdirSync(split.documentPath).sort();
    const splitBlocks = files.flatMap((f) => mermaid(readFileSync(path.join(split.documentPath, f), 'utf8')));
    const singleBlocks = mermaid(readFileSync(single.documentPath, 'utf8'));
    expect(singleBlocks.length).toBeGreaterThan(0);
    expect(splitBlocks).toEqual(singleBlocks);
    for (const file of files.filter((f) => f !== 'README.md')) {
      const text = readFileSync(path.join(split.documentPath, file), 'utf8');
      expect(text).toContain('[Overview](README.md)');
      expect(text).toContain('[Home](README.md)');
      expect(text).not.toContain(`](${file})`);
    }
  });
});
