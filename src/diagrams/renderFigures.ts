import type { Figure } from './figure.js';
import type { RendererName } from './renderers/diagramRenderer.js';
import { DEFAULT_RENDERER, renderers } from './renderers/registry.js';
import { readRenderedSvgs, renderKey } from './svgCache.js';

export interface RenderFiguresOptions {
  renderer?: RendererName;
  /** HTML previously written (the document, or every page of a split folder): its SVGs are reused when still valid. */
  previousHtml?: readonly string[];
  /** The user's project, where optional renderers are looked up. */
  cwd?: string;
}

/** Layouts made in this process, by render key: a second generate (init, tests, the API) lays nothing out again. */
const renderedInProcess = new Map<string, string>();

/** Returns the figures with `svg` filled in; the input is not modified. */
export async function renderFigures(figures: Figure[], options: RenderFiguresOptions = {}): Promise<Figure[]> {
  if (figures.length === 0) return [];
  const rendererName = options.renderer ?? DEFAULT_RENDERER;
  const previous = readRenderedSvgs(options.previousHtml ?? []);
  for (const [key, svg] of renderedInProcess) if (!previous.has(key)) previous.set(key, svg);
  const keyed = figures.map((figure) => ({ figure, key: renderKey(figure, rendererName) }));
  if (keyed.every(({ key }) => previous.has(key))) {
    return keyed.map(({ figure, key }) => ({ ...figure, svg: previous.get(key)!, renderKey: key }));
  }
  const session = await renderers[rendererName]({ cwd: options.cwd ?? process.cwd() });
  try {
    const rendered: Figure[] = [];
    // One at a time: the mermaid-cli session shares one browser, and order keeps output stable.
    for (const { figure, key } of keyed) {
      const svg = previous.get(key) ?? (await session.render(figure.mermaid, { id: figure.id, title: figure.title, desc: figure.caption }));
      if (renderedInProcess.size >= 100) renderedInProcess.clear();
      renderedInProcess.set(key, svg);
      rendered.push({ ...figure, svg, renderKey: key });
    }
    return rendered;
  } finally {
    await session.close();
  }
}
