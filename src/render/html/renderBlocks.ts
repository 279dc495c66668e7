import type { Block, Inline } from '../document/types.js';
import { escapeHtml, safeHref } from './escape.js';

export interface BlockContext {
  /** HTML for each figure id; a figure without one renders nothing (the diagram renderer is optional). */
  figures: ReadonlyMap<string, string>;
  /** Rewrites "#anchor" links when sections live on other pages. */
  resolveHref?: (href: string) => string;
  /** Inside a table cell: long code may wrap at slashes and dots (breakAfterSlashes). */
  inCell?: boolean;
}

/**
 * A long path or member chain in a table cell (`src/payment/api/stripe/stripe-credit-card.controller.ts:10`,
 * `stripe.webhooks.constructEvent`) would hold its column at its whole width and squeeze the prose beside it into a
 * narrow strip: it may wrap after a slash or a dot (<wbr> adds no character, so a copied path comes back whole),
 * never inside a name.
 */
function breakAfterSlashes(html: string): string {
  return html.replace(/\/(?=[^\s/])|\.(?=[A-Za-z_$])/g, '$&<wbr>');
}

/**
 * In a table cell, a long camelCase name (an action named after its route, `sendConversationNewMessageNotification`)
 * would set its column's width alone: it may wrap where a word starts, with <wbr> (no character, copies whole).
 */
function breakLongNames(html: string): string {
  return html.replace(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+){2,}\b/g, (name) => (name.length < 24 ? name : name.replace(/(?<=[a-z0-9])(?=[A-Z])/g, '<wbr>')));
}

export function renderInline(parts: readonly Inline[], context: BlockContext): string {
  return parts
    .map((part) => {
      if (typeof part === 'string') return context.inCell ? breakLongNames(escapeHtml(part)) : escapeHtml(part);
      if ('code' in part) return `<code>${context.inCell ? breakAfterSlashes(escapeHtml(part.code)) : escapeHtml(part.code)}</code>`;
      if ('strong' in part) return `<strong>${escapeHtml(part.strong)}</strong>`;
      if ('br' in part) return '<br>';
      const href = safeHref(context.resolveHref ? context.resolveHref(part.link.href) : part.link.href);
      const text = context.inCell ? breakLongNames(escapeHtml(part.link.text)) : escapeHtml(part.link.text);
      return href === undefined ? text : `<a href="${href}">${text}</a>`;
    })
    .join('');
}

export function renderBlock(block: Block, context: BlockContext): string {
  switch (block.type) {
    case 'p':
      return `<p>${renderInline(block.content, context)}</p>`;
    case 'heading':
      return `<h3 id="${escapeHtml(block.id)}"${block.deliverable ? ` data-deliverable="${block.deliverable}"` : ''}>${escapeHtml(block.text)}</h3>`;
    case 'list': {
      const tag = block.ordered ? 'ol' : 'ul';
      return `<${tag}>\n${block.items.map((item) => `<li>${renderInline(item, context)}</li>`).join('\n')}\n</${tag}>`;
    }
    case 'table': {
      const head = block.columns.some((c) => c !== '')
        ? `<thead><tr>${block.columns.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join('')}</tr></thead>\n`
        : '';
      const cell = { ...context, inCell: true };
      const rows = block.rows.map((row) => `<tr>${row.map((c) => `<td>${renderInline(c, cell)}</td>`).join('')}</tr>`).join('\n');
      return `<div class="table-wrap"><table>\n${head}<tbody>\n${rows}\n</tbody>\n</table></div>`;
    }
    case 'code': {
      const title = block.title ? `<div class="code-title">${escapeHtml(block.title)}</div>\n` : '';
      return `${title}<pre><code class="language-${escapeHtml(block.language)}">${escapeHtml(block.code)}</code></pre>`;
    }
    case 'callout':
      return `<div class="callout ${block.tone}"><p>${renderInline(block.content, context)}</p></div>`;
    case 'figure':
      return context.figures.get(block.figureId) ?? '';
  }
}

export function renderBlocks(blocks: readonly Block[], context: BlockContext): string {
  return blocks
    .map((block) => renderBlock(block, context))
    .filter((html) => html !== '')
    .join('\n');
}
