import { escapeXml } from './escapeXml.js';
import type { Figure } from './figure.js';
import { renderStamp } from './svgCache.js';

/**
 * Marker that opens the comment holding a figure's Mermaid source. `verify` and regeneration read
 * it back with readMermaidComments, so its form is part of the document format.
 */
const MARK = 'mermaid-source';

/**
 * A figure for the HTML document: the inline SVG, its Mermaid source in an adjacent comment, and
 * the caption. Comment text escapes &, < and > so that `-->` in the source (every Mermaid edge)
 * cannot end the comment early, and reading it back is exact.
 */
export function figureHtml(figure: Figure): string {
  if (figure.svg === undefined) throw new Error(`Bug: figure "${figure.id}" reached the HTML renderer without an SVG; call renderFigures first`);
  return [
    `<figure id="${escapeXml(figure.id)}" class="diagram diagram-${figure.kind}"${figure.renderKey ? ` data-render="${renderStamp(figure.renderKey, figure.svg)}"` : ''}>`,
    mermaidComment(figure),
    figure.svg,
    `<figcaption><strong>${escapeXml(figure.title)}.</strong> ${escapeXml(figure.caption)}</figcaption>`,
    '</figure>',
  ].join('\n');
}

export function mermaidComment(figure: Pick<Figure, 'id' | 'mermaid'>): string {
  if (!/^[A-Za-z0-9][\w-]*$/.test(figure.id)) throw new Error(`Bug: figure id "${figure.id}" is not a safe identifier`);
  return `<!-- ${MARK} ${figure.id}\n${escapeComment(figure.mermaid)}-->`;
}

/** The Mermaid sources of every figure comment in an HTML string, in document order, byte-exact. */
export function readMermaidComments(html: string): string[] {
  return [...html.matchAll(new RegExp(`<!-- ${MARK} [^\\s]+\\n([\\s\\S]*?)-->`, 'g'))].map((m) => unescapeComment(m[1]!));
}

function escapeComment(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function unescapeComment(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
