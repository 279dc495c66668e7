import type { Figure } from './figure.js';
import type { RendererName } from './renderers/diagramRenderer.js';
import { DEFAULT_RENDERER, renderers } from './renderers/registry.js';

export interface RenderFiguresOptions {
  renderer?: RendererName;
  /** The user's project, where optional renderers are looked up. */
  cwd?: string;
}

/** Returns the figures with `svg` filled in; the input is not modified. */
export async function renderFigures(figures: Figure[], options: RenderFiguresOptions = {}): Promise<Figure[]> {
  if (figures.length === 0) return [];
  const session = await renderers[options.renderer ?? DEFAULT_RENDERER]({ cwd: options.cwd ?? process.cwd() });
  try {
    const rendered: Figure[] = [];
    // One at a time: the mermaid-cli session shares one browser, and order keeps output stable.
    for (const figure of figures) {
      const svg = await session.render(figure.mermaid, { id: figure.id, title: figure.title, desc: figure.caption });
      rendered.push({ ...figure, svg });
    }
    return rendered;
  } finally {
    await session.close();
  }
}
