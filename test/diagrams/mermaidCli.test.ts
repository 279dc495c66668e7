import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { renderFigures } from '../../src/diagrams/index.js';
import { openMermaidCliWith, type MermaidCliModules } from '../../src/diagrams/renderers/mermaidCli.js';

/** What mermaid-cli 11 returns for svgId "request-flow-svg": its CSS is already scoped to that id. */
const MERMAID_SVG =
  '<svg id="request-flow-svg" width="100%" xmlns="http://www.w3.org/2000/svg" style="max-width: 412.5px; background-color: transparent;" viewBox="0 0 412.5 230" role="graphics-document document" aria-roledescription="flowchart-v2">' +
  '<style>#request-flow-svg{font-family:system-ui,sans-serif;font-size:16px;fill:#333;}#request-flow-svg .edge{stroke:#333;}</style>' +
  '<g><marker id="request-flow-svg_flowchart-v2-pointEnd" viewBox="0 0 10 10"><path d="M 0 0 L 10 5 L 0 10 z"/></marker>' +
  '<path d="M1.123456,2L3,4" marker-end="url(#request-flow-svg_flowchart-v2-pointEnd)"/><text>a --&gt; b</text></g></svg>';

function fakeModules(launch: () => Promise<{ close(): Promise<void> }>, calls: unknown[] = []): MermaidCliModules {
  return {
    puppeteer: { launch },
    cli: {
      renderMermaid: (_browser, definition, format, options) => {
        calls.push({ definition, format, options });
        return Promise.resolve({ data: new TextEncoder().encode(MERMAID_SVG) });
      },
    },
  };
}

describe('mermaid-cli renderer', () => {
  it('explains how to install it when @mermaid-js/mermaid-cli is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'idb-no-mmdc-'));
    const error = await renderFigures([{ id: 'request-flow', kind: 'flowchart', title: 't', caption: 'c', mermaid: 'flowchart TD\n    a --> b\n' }], {
      renderer: 'mermaid-cli',
      cwd: empty,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toContain('@mermaid-js/mermaid-cli@11');
    expect((error as UserError).fix).toContain('npm install --save-dev @mermaid-js/mermaid-cli@11');
  });

  it('explains how to get a browser when Chrome cannot start', async () => {
    const modules = fakeModules(() => Promise.reject(new Error('Could not find Chrome (ver. 131.0.6778.204).\nThis can occur if …')));
    const error = await openMermaidCliWith({ cwd: '.' }, () => Promise.resolve(modules)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toBe('The mermaid-cli diagram renderer could not start Chrome: Could not find Chrome (ver. 131.0.6778.204).');
    expect((error as UserError).fix).toContain('npx puppeteer browsers install chrome-headless-shell');
  });

  it('asks mermaid for strict, plain-SVG output and finishes it like the default renderer', async () => {
    const calls: unknown[] = [];
    let closed = false;
    const modules = fakeModules(() => Promise.resolve({ close: () => ((closed = true), Promise.resolve()) }), calls);
    const renderer = await openMermaidCliWith({ cwd: '.' }, () => Promise.resolve(modules));
    const svg = await renderer.render('flowchart TD\n    a --> b\n', { id: 'request-flow', title: 'Request handling', desc: 'How it flows.' });
    await renderer.close();
    expect(closed).toBe(true);
    expect(calls).toEqual([
      expect.objectContaining({
        format: 'svg',
        options: expect.objectContaining({ svgId: 'request-flow-svg', mermaidConfig: expect.objectContaining({ securityLevel: 'strict', htmlLabels: false }) }),
      }),
    ]);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" id="request-flow-svg" class="diagram" viewBox="0 0 412.5 230" width="100%" role="img"/);
    expect(svg).toContain('<title id="request-flow-title">Request handling</title>');
    expect(svg).toContain('marker-end="url(#request-flow-svg_flowchart-v2-pointEnd)"');
    expect(svg).toContain('<style>#request-flow-svg{font-family');
    expect(svg).toContain('d="M1.12,2L3,4"');
  });
});
