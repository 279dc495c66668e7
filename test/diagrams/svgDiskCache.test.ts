import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Figure } from '../../src/diagrams/index.js';
import type * as Registry from '../../src/diagrams/renderers/registry.js';

// Counts real layouts: a figure served from the disk cache is never handed to the renderer.
const calls = vi.hoisted(() => ({ render: 0 }));
vi.mock('../../src/diagrams/renderers/registry.js', async (original) => {
  const actual = await original<typeof Registry>();
  const counting = async (...args: Parameters<(typeof actual.renderers)['beautiful-mermaid']>) => {
    const session = await actual.renderers['beautiful-mermaid'](...args);
    return { ...session, render: (...a: Parameters<typeof session.render>) => (calls.render++, session.render(...a)) };
  };
  return { ...actual, renderers: { ...actual.renderers, 'beautiful-mermaid': counting } };
});

const figure = (label: string): Figure => ({
  id: 'saga-checkout',
  kind: 'saga',
  title: 'Checkout saga',
  caption: 'Reserve, charge, confirm.',
  mermaid: `stateDiagram-v2\n    [*] --> RESERVED: ${label}\n    RESERVED --> [*]: confirm\n`,
});

/** renderFigures as a fresh CLI process sees it: nothing laid out in memory yet. */
async function freshRenderFigures() {
  vi.resetModules();
  return (await import('../../src/diagrams/renderFigures.js')).renderFigures;
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-svgcache-'));
  calls.render = 0;
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('SVG disk cache', () => {
  it('lays a figure out once across processes, and again when its input changes', async () => {
    const svgDir = path.join(root, '.idempotency-builder/cache/svg');
    const [first] = await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root });
    expect(calls.render).toBe(1);
    await expect(readdir(svgDir)).rejects.toThrow(); // not a writing run: nothing stored

    await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root, writeCache: true });
    expect(calls.render).toBe(2);
    expect(await readdir(svgDir)).toHaveLength(1);

    const [cached] = await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root });
    expect(calls.render).toBe(2);
    expect(cached).toEqual(first);

    // New input: a new layout, and the writing run drops the entry it no longer uses.
    const [changed] = await (await freshRenderFigures())([figure('hold stock')], { cacheRoot: root, writeCache: true });
    expect(calls.render).toBe(3);
    expect(changed!.svg).not.toBe(first!.svg);
    expect(await readdir(svgDir)).toHaveLength(1);
  });

  it('ignores a corrupt entry and lays the figure out again', async () => {
    const svgDir = path.join(root, '.idempotency-builder/cache/svg');
    const [first] = await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root, writeCache: true });
    const [name] = await readdir(svgDir);
    await writeFile(path.join(svgDir, name!), 'deadbeef\n<svg>tampered</svg>');
    const [again] = await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root, writeCache: true });
    expect(calls.render).toBe(2);
    expect(again!.svg).toBe(first!.svg);
    const [third] = await (await freshRenderFigures())([figure('reserve')], { cacheRoot: root });
    expect(calls.render).toBe(2);
    expect(third!.svg).toBe(first!.svg);
  });
});
