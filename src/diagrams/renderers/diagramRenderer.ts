import type { SvgMeta } from '../finishSvg.js';

export type RendererName = 'beautiful-mermaid' | 'mermaid-cli';

export interface RendererOptions {
  /** The user's project: optional renderers are resolved from its node_modules. */
  cwd: string;
}

/**
 * One way of turning Mermaid into finished, inline-ready SVG. A session may hold expensive
 * resources (a browser), so renderFigures opens one, renders every figure, then closes it.
 */
export interface DiagramRenderer {
  readonly name: RendererName;
  render(mermaid: string, meta: SvgMeta): Promise<string>;
  close(): Promise<void>;
}

export type OpenRenderer = (options: RendererOptions) => Promise<DiagramRenderer>;
