/** One diagram as the renderers see it. Mermaid is the source of truth; svg is derived from it. */
export interface Figure {
  /** Unique in the document; also the prefix of every id inside the SVG. */
  id: string;
  kind: 'flowchart' | 'saga';
  /** Action slug, for saga figures. */
  action?: string;
  /** Plain text. */
  title: string;
  /** Plain text, one or two sentences. */
  caption: string;
  mermaid: string;
  /** Inline SVG for HTML; undefined until renderFigures has run (and always for Markdown). */
  svg?: string;
  /** Set with svg: the render key, so regeneration can reuse the SVG when nothing that shapes it changed. */
  renderKey?: string;
}
