import type * as BeautifulMermaid from 'beautiful-mermaid';
import { finishSvg, type SvgMeta } from '../finishSvg.js';
import type { DiagramRenderer } from './diagramRenderer.js';
import { loadBeautifulMermaid } from './loadBeautifulMermaid.js';

/**
 * The default renderer: beautiful-mermaid (pinned exactly in package.json) lays diagrams out in
 * pure JS with its own text metrics, so the bytes do not depend on installed fonts or a browser.
 */
export async function openBeautifulMermaid(): Promise<DiagramRenderer> {
  // Loaded on first use: layout (elkjs) is heavy, and a rerun that reuses every SVG never needs it.
  const { renderMermaidSVG, saveCodeCache } = await loadBeautifulMermaid();
  return {
    name: 'beautiful-mermaid',
    render: (mermaid: string, meta: SvgMeta) => Promise.resolve(renderBeautifulMermaid(renderMermaidSVG, mermaid, meta)),
    // After the layouts, so V8's cache also holds the functions they compiled.
    close: () => Promise.resolve(saveCodeCache()),
  };
}

type Layout = typeof BeautifulMermaid.renderMermaidSVG;

export function renderBeautifulMermaid(renderMermaidSVG: Layout, mermaid: string, meta: SvgMeta): string {
  // Colours are rewritten below; transparent keeps the page background behind the diagram.
  const raw = renderMermaidSVG(mermaid, { transparent: true, padding: 16 });
  // Node labels are laid out at 13px; allowing 14/13 lets them reach 14px on a wide page.
  return finishSvg(enlargeEdgeLabels(themeForDocument(raw)), meta, { scopeCss: true, maxScale: 14 / 13 });
}

const EDGE_LABEL_SIZE = 11;
const EDGE_LABEL_TARGET = 12;

/**
 * beautiful-mermaid sets edge labels at 11px, small once a tall diagram is scaled to the page.
 * They are raised to 12px and their background boxes widened by the same factor around the
 * centre, which the layout's label spacing absorbs.
 */
function enlargeEdgeLabels(svg: string): string {
  const k = EDGE_LABEL_TARGET / EDGE_LABEL_SIZE;
  return svg.replace(/<g class="edge-label"[\s\S]*?<\/g>/g, (group) =>
    group
      .replace(/<rect x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"/, (_m, x: string, y: string, w: string, h: string) => {
        const width = Number(w) * k;
        const height = Number(h) * k;
        const left = Number(x) - (width - Number(w)) / 2;
        const top = Number(y) - (height - Number(h)) / 2;
        return `<rect x="${left}" y="${top}" width="${width}" height="${height}"`;
      })
      .replace(`font-size="${EDGE_LABEL_SIZE}"`, `font-size="${EDGE_LABEL_TARGET}"`)
      .replace(/dy="([^"]+)"/g, (_m, dy: string) => `dy="${Number(dy) * k}"`),
  );
}

/** Light fallbacks: the SVG also has to read correctly in a page whose CSS defines no variables. */
export const FALLBACK_COLOURS = { fg: '#1f2328', bg: '#ffffff' } as const;

const FONT_STACK = 'var(--diagram-font, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif)';

/**
 * Ties the diagram's colours and font to the document's CSS custom properties.
 *
 * The document shares --fg, --bg, --accent, --muted and --border with the diagrams (text, label
 * backgrounds, arrow heads, edge labels, node outlines), so a dark colour scheme that redefines
 * them restyles the diagrams too. beautiful-mermaid's --line and --surface are renamed to
 * --diagram-line / --diagram-surface because a document may use those generic names differently.
 * Its inline `--bg:…;--fg:…` on the root is dropped: set there it would shadow the document's.
 */
function themeForDocument(svg: string): string {
  return svg
    .replace(/^(<svg\b[^>]*?)\sstyle="[^"]*"/, '$1')
    .replace(/text \{ font-family: [^}]*\}/, `text { font-family: ${FONT_STACK}; }`)
    .replace(/var\(--fg\)/g, `var(--fg, ${FALLBACK_COLOURS.fg})`)
    .replace(/var\(--bg\)/g, `var(--bg, ${FALLBACK_COLOURS.bg})`)
    .replace(/var\(--line,/g, 'var(--diagram-line,')
    .replace(/var\(--surface,/g, 'var(--diagram-surface,');
}
