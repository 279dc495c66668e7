import type { Figure } from '../diagrams/index.js';
import type { DesignModel } from '../model/types.js';
import type { CodeSamples } from './code/index.js';
import { buildDocument } from './document/buildDocument.js';
import type { DocumentTree } from './document/types.js';
import { renderHtml } from './html/renderHtml.js';
import { renderMarkdown } from './markdown/renderMarkdown.js';

export interface RenderedFile {
  /** Project-relative POSIX path. */
  path: string;
  contents: string;
  class: 'managed' | 'scaffold';
  /** Already in the house style; formatting is skipped unless the project has its own prettier config. */
  formatted?: boolean;
  /**
   * Set when this is an addition to a file the user owns (schema.prisma, drizzle's journal): the text the addition was
   * computed from. It is written only while the file still reads exactly so, and never recorded in the manifest, so
   * the file stays the user's.
   */
  editOf?: string;
}

export interface RenderDocumentOptions {
  format: 'html' | 'md';
  /** Project-relative path of the document. */
  output: string;
  /** Figures with Mermaid (and SVG for HTML) already produced. */
  figures: readonly Figure[];
  /** Excerpts of the generated files, already in their final (formatted) form: the document's only code. */
  excerpts: CodeSamples;
  /** Single file or linked folder (named after `output` without its extension); default "never". */
  split?: 'auto' | 'always' | 'never';
}

export function buildTree(model: DesignModel, options: Pick<RenderDocumentOptions, 'figures' | 'excerpts'>): DocumentTree {
  return buildDocument(model, options.excerpts, options.figures);
}

/** The single-file document, or the split folder when the layout calls for one; both from the same tree. */
export async function renderDocument(model: DesignModel, options: RenderDocumentOptions): Promise<RenderedFile[]> {
  const tree = buildTree(model, options);
  if (options.split !== undefined && options.split !== 'never') {
    const { renderSplit } = await import('./split/renderSplit.js');
    const { files } = await renderSplit(tree, { format: options.format, output: options.output, split: options.split, figures: options.figures });
    if (files.length > 0) return files.map((file) => ({ ...file, class: 'managed' as const }));
  }
  if (options.format === 'md') {
    const figures = new Map(options.figures.map((f) => [f.id, { title: f.title, caption: f.caption, mermaid: f.mermaid }]));
    return [{ path: options.output, contents: renderMarkdown(tree, figures), class: 'managed' }];
  }
  const { figureHtml } = await import('../diagrams/index.js');
  const figures = new Map(options.figures.filter((f) => f.svg !== undefined).map((f) => [f.id, figureHtml(f)]));
  return [{ path: options.output, contents: renderHtml(tree, figures), class: 'managed' }];
}
