import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFigures, readMermaidComments, renderFigures } from '../../src/diagrams/index.js';
import { buildDesign } from '../../src/model/index.js';
import { NOW, fixtureNames, loadFixture } from '../helpers/fixtures.js';
import { mermaidParse } from './mermaidParser.js';
import { diagramPage } from './page.js';

/**
 * Every fixture config through the real pipeline (config → buildDesign → figures → SVG). Byte
 * goldens live in renderFigures.test.ts on hand-built models, so a model tweak elsewhere does not
 * churn them; here the structure is checked.
 */
describe.each(fixtureNames())('diagrams for fixture %s', (name) => {
  const model = buildDesign(loadFixture(name), undefined, { now: NOW });

  it('has the flowchart when the model says it pays off, and one state machine per saga', async () => {
    const figures = buildFigures(model);
    expect(figures.some((f) => f.id === 'request-flow')).toBe(model.diagrams.flowchart);
    expect(figures.filter((f) => f.kind === 'saga').map((f) => f.action)).toEqual(model.sagas.map((s) => s.slug));
    for (const figure of figures) await expect(mermaidParse(figure.mermaid), figure.id).resolves.toBeTruthy();
  });

  it('renders every figure to inline SVG whose comments give back the Mermaid sources', async () => {
    const figures = await renderFigures(buildFigures(model));
    const html = diagramPage(figures);
    expect(readMermaidComments(html)).toEqual(figures.map((f) => f.mermaid));
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    // Kept for looking at (git-ignored).
    const dir = join(process.cwd(), '.tmp', 'diagrams', 'fixtures');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.html`), html);
  });
});
