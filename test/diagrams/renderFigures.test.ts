import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { buildFigures, figureHtml, readMermaidComments, renderFigures } from '../../src/diagrams/index.js';
import type { Figure } from '../../src/diagrams/index.js';
import { expectGolden } from './golden.js';
import { expressStripe, hostileNames, nestjsAdyenSaga } from './models.js';
import { diagramPage } from './page.js';

const scenarios = { nestjsAdyenSaga, expressStripe, hostileNames };

async function renderAll(): Promise<Record<string, Figure[]>> {
  const out: Record<string, Figure[]> = {};
  for (const [name, model] of Object.entries(scenarios)) out[name] = await renderFigures(buildFigures(model));
  return out;
}

describe('renderFigures (beautiful-mermaid)', () => {
  it('matches the golden SVGs, byte for byte, on every run', async () => {
    const first = await renderAll();
    const second = await renderAll();
    expect(second).toEqual(first);
    for (const [name, figures] of Object.entries(first)) {
      for (const figure of figures) expectGolden(`${name}/${figure.id}.svg`, figure.svg!);
    }
  });

  it('produces responsive, accessible, self-contained SVG', async () => {
    for (const figures of Object.values(await renderAll())) {
      for (const { id, svg, title } of figures) {
        const root = /^<svg [^>]*>/.exec(svg!)![0];
        expect(root).toMatch(/ viewBox="0 0 [\d.]+ [\d.]+"/);
        expect(root).toContain(' width="100%"');
        expect(root).not.toMatch(/ height="/);
        expect(root).toMatch(/style="max-width:\d+px;height:auto"/);
        expect(root).toContain(`id="${id}-svg"`);
        expect(root).toContain(`role="img" aria-labelledby="${id}-title ${id}-desc"`);
        expect(svg).toContain(`<title id="${id}-title">${title.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</title>`);
        expect(svg!.replace(' xmlns="http://www.w3.org/2000/svg"', '')).not.toMatch(/@import|https?:|<script|<foreignObject/);
        expect(svg).not.toMatch(/url\((?!#)/);
        // Labels at 13px (node) and 12px (edge) in the viewBox; the max-width lets them reach ~14px.
        expect(svg).toMatch(/font-size="13"/);
        expect(svg).not.toMatch(/font-size="1[01]"/);
        expect(svg).toContain('font-family: var(--diagram-font, system-ui');
      }
    }
  });

  it('scopes every CSS rule to its own diagram', async () => {
    for (const figures of Object.values(await renderAll())) {
      for (const { id, svg } of figures) {
        const css = [...svg!.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!).join('\n');
        const selectors = [...css.matchAll(/([^{}]+)\{[^{}]*\}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()));
        expect(selectors.length).toBeGreaterThan(0);
        for (const selector of selectors) expect(selector.startsWith(`#${id}-svg`), selector).toBe(true);
      }
    }
  });

  it('uses the document’s colour variables, with light fallbacks, and never redefines them', async () => {
    const [flow] = (await renderAll()).nestjsAdyenSaga!;
    for (const name of ['--fg', '--bg', '--accent', '--muted', '--border']) expect(flow!.svg).toContain(`var(${name}`);
    expect(flow!.svg).toContain('var(--fg, #1f2328)');
    expect(flow!.svg).toContain('var(--bg, #ffffff)');
    expect(flow!.svg).not.toMatch(/[\s;"{]--(fg|bg|accent|muted|border|line|surface)\s*:/);
  });

  it('gives two diagrams on one page no shared ids, and every reference resolves inside its own diagram', async () => {
    const all = await renderAll();
    const figures = [...all.nestjsAdyenSaga!, ...all.hostileNames!.slice(1)];
    const html = diagramPage(figures);
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { id, svg } of figures) {
      for (const ref of svg!.matchAll(/url\(#([^)]+)\)|aria-labelledby="([^"]+)"/g)) {
        for (const target of (ref[1] ?? ref[2]!).split(' ')) {
          expect(target.startsWith(`${id}-`), target).toBe(true);
          expect(svg).toContain(`id="${target}"`);
        }
      }
    }
  });

  it('keeps hostile names as escaped text', async () => {
    const figures = (await renderAll()).hostileNames!;
    const html = figures.map(figureHtml).join('\n');
    // Parsed as a browser would: no element or attribute may come from a name.
    const elements = new Set<string>();
    const attributes = new Set<string>();
    const parser = new Parser({ onopentag: (name, attrs) => (elements.add(name), Object.keys(attrs).forEach((a) => attributes.add(a))) }, { xmlMode: false });
    parser.end(html);
    const allowed = ['circle', 'defs', 'desc', 'figcaption', 'figure', 'g', 'marker', 'polygon', 'polyline', 'rect', 'strong', 'style', 'svg', 'text', 'title', 'tspan'];
    for (const element of elements) expect(allowed, element).toContain(element);
    expect(elements.has('img')).toBe(false);
    expect([...attributes].filter((a) => a.startsWith('on'))).toEqual([]);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('renders nothing for no figures', async () => {
    expect(await renderFigures([])).toEqual([]);
  });
});

describe('figureHtml and readMermaidComments', () => {
  it('round-trips every Mermaid source exactly, even sources containing --> and markup', async () => {
    const figures = [...(await renderFigures(buildFigures(nestjsAdyenSaga))), ...(await renderFigures(buildFigures(hostileNames)))];
    const tricky: Figure = { ...figures[0]!, id: 'tricky', mermaid: 'flowchart TD\n    a["x --> y <!-- z --> &amp; &lt; --!>"] --> b\n' };
    const all = [...figures, tricky];
    const html = diagramPage(all);
    expect(readMermaidComments(html)).toEqual(all.map((f) => f.mermaid));
    // Nothing inside a comment can close it early.
    for (const m of html.matchAll(/<!--([\s\S]*?)-->/g)) expect(m[1]).not.toMatch(/<!--|--!?>|</);
  });

  it('puts the comment right before the SVG inside the figure, with an escaped caption', async () => {
    const [flow] = await renderFigures(buildFigures(expressStripe));
    const html = figureHtml({ ...flow!, caption: 'a < b & "c"' });
    expect(html).toMatch(/^<figure id="request-flow" class="diagram diagram-flowchart" data-render="[0-9a-f]+\.[0-9a-f]+">\n<!-- mermaid-source request-flow\nflowchart TD\n[\s\S]*-->\n<svg /);
    expect(html).toContain('<figcaption><strong>Request handling.</strong> a &lt; b &amp; &quot;c&quot;</figcaption>\n</figure>');
  });

  it('refuses a figure that was never rendered', () => {
    const [flow] = buildFigures(expressStripe);
    expect(() => figureHtml(flow!)).toThrow(/renderFigures/);
  });
});
