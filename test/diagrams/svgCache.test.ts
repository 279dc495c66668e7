import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { figureHtml, renderFigures, RENDER_VERSION, type Figure } from '../../src/diagrams/index.js';

const figure: Figure = {
  id: 'saga-checkout',
  kind: 'saga',
  title: 'Checkout saga',
  caption: 'Reserve, charge, confirm; compensations in reverse.',
  mermaid: 'stateDiagram-v2\n    [*] --> RESERVED: reserve\n    RESERVED --> [*]: confirm\n',
};

describe('SVG reuse on regeneration', () => {
  it('reuses the SVG already written when nothing that shapes it changed', async () => {
    const [first] = await renderFigures([figure]);
    // A stand-in SVG stamped as if it had been written: only reuse could return it.
    const stand = first!.svg!.replace('<title', '<!-- written earlier --><title');
    const previous = figureHtml({ ...first!, svg: stand });
    const [again] = await renderFigures([figure], { previousHtml: [previous] });
    expect(again!.svg).toBe(stand);
  });

  it('renders afresh when the SVG on disk was edited by hand', async () => {
    const [first] = await renderFigures([figure]);
    const previous = figureHtml(first!).replace('<title', '<!-- hand edit --><title');
    const [again] = await renderFigures([figure], { previousHtml: [previous] });
    expect(again!.svg).toBe(first!.svg);
  });

  it('renders afresh when the Mermaid source changed', async () => {
    const [first] = await renderFigures([figure]);
    const changed = { ...figure, mermaid: figure.mermaid.replace('confirm', 'confirm order') };
    const [again] = await renderFigures([changed], { previousHtml: [figureHtml(first!)] });
    expect(again!.svg).not.toBe(first!.svg);
    expect(again!.svg).toContain('confirm order');
  });
});

describe('RENDER_VERSION', () => {
  // Reused SVGs are only right while the renderer would produce the same bytes; the golden SVGs are
  // the witness. When they change, RENDER_VERSION must change too, or users keep stale diagrams.
  it('changes whenever the golden SVGs change', () => {
    const dir = fileURLToPath(new URL('golden/', import.meta.url));
    const hash = createHash('sha256');
    for (const group of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
      for (const name of readdirSync(join(dir, group)).sort()) hash.update(`${group}/${name}\0`).update(readFileSync(join(dir, group, name)));
    }
    const goldenDigest = hash.digest('hex');
    const recordFile = join(dir, 'render-version.json');
    const record = existsSync(recordFile) ? (JSON.parse(readFileSync(recordFile, 'utf8')) as { version: string; goldenDigest: string }) : undefined;
    if (record?.goldenDigest === goldenDigest) {
      expect(record.version).toBe(RENDER_VERSION);
      return;
    }
    if (record && record.version === RENDER_VERSION) {
      throw new Error('The golden SVGs changed but RENDER_VERSION did not: bump it in src/diagrams/svgCache.ts so regeneration does not reuse stale diagrams.');
    }
    if (process.env['UPDATE_GOLDEN'] !== '1') throw new Error('Golden SVG record is missing or outdated; run with UPDATE_GOLDEN=1 and review.');
    writeFileSync(recordFile, `${JSON.stringify({ version: RENDER_VERSION, goldenDigest }, null, 2)}\n`);
  });
});
