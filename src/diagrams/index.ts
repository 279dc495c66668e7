/** Diagrams: model → graph → Mermaid source, and → inline SVG for the HTML document. */
export type { Figure } from './figure.js';
export { buildFigures, type FigureInputs } from './buildFigures.js';
export { renderFigures, startLayoutWorker, type LayoutWorker, type RenderFiguresOptions } from './renderFigures.js';
export { figureHtml, readMermaidComments } from './figureHtml.js';
export { RENDER_VERSION } from './svgCache.js';
export type { RendererName } from './renderers/diagramRenderer.js';
export { DEFAULT_RENDERER, renderers } from './renderers/registry.js';
