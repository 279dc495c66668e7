import { DomUtils } from 'htmlparser2';
import { childrenOf, isElement, parseHtml, textOf, type HtmlElement, type HtmlNode } from './htmlDom.js';
import { scanHtml } from './scanHtml.js';
import type { OutlineBlock, ParsedPage } from './types.js';

const TEXT_ELEMENTS = new Set(['p', 'li', 'figcaption', 'blockquote', 'dd', 'dt']);

/** Parses an HTML page with a real parser into anchors, links, findings and its reading outline. */
export function parseHtmlPage(file: string, html: string): ParsedPage {
  const document = parseHtml(html);
  const scan = scanHtml(document, file, { diagrams: true });
  const blocks: OutlineBlock[] = [];
  let generatedOn: string | undefined;
  const visit = (node: HtmlNode) => {
    if (!isElement(node)) return;
    const name = node.name.toLowerCase();
    if (/^h[1-6]$/.test(name)) {
      blocks.push({ kind: 'heading', level: Number(name[1]), text: textOf(node), deliverable: node.attribs['data-deliverable'] });
      return;
    }
    if (name === 'table') {
      blocks.push(readTable(node));
      return;
    }
    if (name === 'pre') {
      const code = childrenOf(node).find((c): c is HtmlElement => isElement(c) && c.name === 'code');
      const language = /(?:^|\s)language-([\w+-]+)/.exec(code?.attribs['class'] ?? '')?.[1] ?? '';
      blocks.push({ kind: 'code', language, text: textOfRaw(node) });
      return;
    }
    if (name === 'svg') {
      blocks.push({ kind: 'diagram' });
      return;
    }
    if (name === 'footer') {
      const time = DomUtils.findOne((el) => el.name === 'time' && el.attribs['datetime'] !== undefined, childrenOf(node));
      generatedOn ??= time?.attribs['datetime'];
    }
    if (TEXT_ELEMENTS.has(name) && !childrenOf(node).some((c) => isElement(c) && ['p', 'ul', 'ol', 'table', 'pre'].includes(c.name))) {
      blocks.push({ kind: 'text', text: textOf(node) });
      return;
    }
    for (const child of childrenOf(node)) visit(child);
  };
  for (const child of childrenOf(document)) visit(child);
  return { file, format: 'html', anchors: scan.anchors, links: [...scan.links, ...scan.cssReferences.map((href) => ({ href, kind: 'asset' as const, via: 'inline CSS' }))], blocks, generatedOn, findings: scan.findings };
}

function readTable(table: HtmlElement): OutlineBlock {
  const rows: HtmlElement[] = [];
  const collect = (node: HtmlNode) => {
    if (!isElement(node)) return;
    if (node.name === 'tr') rows.push(node);
    else if (node.name !== 'table') for (const child of childrenOf(node)) collect(child);
  };
  for (const child of childrenOf(table)) collect(child);
  const cells = (row: HtmlElement) => childrenOf(row).filter((c): c is HtmlElement => isElement(c) && (c.name === 'td' || c.name === 'th')).map(textOf);
  const first = rows[0];
  const hasHeader = first !== undefined && childrenOf(first).every((c) => !isElement(c) || c.name === 'th');
  return { kind: 'table', header: hasHeader && first ? cells(first) : [], rows: (hasHeader ? rows.slice(1) : rows).map(cells) };
}

/** Code keeps its line breaks. */
function textOfRaw(node: HtmlNode): string {
  if (node.type === 'text') return String(node.data);
  return childrenOf(node).map(textOfRaw).join('');
}
