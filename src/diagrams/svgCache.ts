import { createHash } from 'node:crypto';
import type { Figure } from './figure.js';
import type { RendererName } from './renderers/diagramRenderer.js';

/**
 * Identifies what a renderer turns Mermaid into. Bump it whenever the same Mermaid would come out as
 * different SVG (a new layout library version, any change in finishSvg or a renderer's post-processing);
 * test/diagrams/svgCache.test.ts fails when the golden SVGs change while this stays the same.
 */
export const RENDER_VERSION = 'beautiful-mermaid@1.1.3;finish@1';

const digest = (...parts: string[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 20);
};

/** Everything that decides a figure's SVG: re-rendering is skipped only when all of it is unchanged. */
export function renderKey(figure: Pick<Figure, 'id' | 'title' | 'caption' | 'mermaid'>, renderer: RendererName): string {
  return digest(RENDER_VERSION, renderer, figure.id, figure.title, figure.caption, figure.mermaid);
}

/** The attribute value a figure carries: its render key and a digest of the SVG that was written with it. */
export function renderStamp(renderKeyValue: string, svg: string): string {
  return `${renderKeyValue}.${digest(svg)}`;
}

const FIGURE = /<figure id="[^"]+" class="diagram[^"]*" data-render="([0-9a-f]+)\.([0-9a-f]+)">\n<!-- mermaid-source [^\n]*\n[\s\S]*?-->\n(<svg[\s\S]*?<\/svg>)\n<figcaption>/g;

/**
 * SVGs already written in previous output, by render key. A figure is reused only when the SVG on
 * disk still has the digest stamped next to it, so a hand-edited diagram is rendered afresh.
 */
export function readRenderedSvgs(htmlPages: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const html of htmlPages) {
    for (const match of html.matchAll(FIGURE)) {
      const [, key, svgDigest, svg] = match;
      if (key && svg && digest(svg) === svgDigest) found.set(key, svg);
    }
  }
  return found;
}
