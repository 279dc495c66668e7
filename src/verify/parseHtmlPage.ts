import { childrenOf, isElement, parseHtml, rawTextOf, textOf, walkDom, SKIP, type HtmlElement } from './htmlDom.js';
import { limitNesting, nestingFinding } from './limitNesting.js';
import { scanHtml } from './scanHtml.js';
import type { OutlineBlock, ParsedPage } from './types.js';

const TEXT_ELEMENTS = new Set(['p', 'li', 'figcaption', 'blockquote', 'dd', 'dt']);

/** Parses an HTML page with a real parser into anchors, links, findings and its reading outline. */
export function parseHtmlPage(file: string, html: string): ParsedPage {
  const limited = limitNesting(html);
  const document = parseHtml(limited.html);
  const scan = scanHtml(document, file, { diagrams: true });
  if (limited.deepest !== undefined) scan.findings.push({ file, message: nestingFinding(limited.deepest) });
  const blocks: OutlineBlock[] = [];
  let generatedOn: string | undefined;
  walkDom(childrenOf(document), undefined, (node) => {
    if (!isElement(node)) return SKIP;
    const name = node.name.toLowerCase();
    if (/^h[1-6]$/.test(name)) {
      blocks.push({ kind: 'heading', level: Number(name[1]), text: textOf(node), deliverable: node.attribs['data-deliverable'] });
      return SKIP;
    }
    if (name === 'table') {
      blocks.push(readTable(node));
      return SKIP;
    }
    if (name === 'pre') {
      const code = childrenOf(node).find((c): c is HtmlElement => isElement(c) && c.name === 'code');
      const language = /(?:^|\s)language-([\w+-]+)/.exec(code?.attribs['class'] ?? '')?.[1] ?? '';
      blocks.push({ kind: 'code', language, text: rawTextOf(node) });
      return SKIP;
    }
    if (name === 'svg') {
      blocks.push({ kind: 'diagram' });
      return SKIP;
    }
    if (name === 'footer') generatedOn ??= footerDate(node);
    if (TEXT_ELEMENTS.has(name) && !childrenOf(node).some((c) => isElement(c) && ['p', 'ul', 'ol', 'table', 'pre'].includes(c.name))) {
      blocks.push({ kind: 'text', text: textOf(node) });
      return SKIP;
    }
    return undefined;
  });
  return { file, format: 'html', anchors: scan.anchors, links: [...scan.links, ...scan.cssReferences.map((href) => ({ href, kind: 'asset' as const, via: 'inline CSS' }))], blocks, generatedOn, findings: scan.findings };
}

function footerDate(footer: HtmlElement): string | undefined {
  let date: string | undefined;
  walkDom(childrenOf(footer), undefined, (node) => {
    if (date !== undefined || !isElement(node)) return SKIP;
    if (node.name === 'time' && node.attribs['datetime'] !== undefined) date = node.attribs['datetime'];
    return undefined;
  });
  return date;
}

function readTable(table: HtmlElement): OutlineBlock {
  const rows: HtmlElement[] = [];
  walkDom(childrenOf(table), undefined, (node) => {
    if (!isElement(node)) return SKIP;
    if (node.name === 'tr') rows.push(node);
    else if (node.name !== 'table') return undefined;
    return SKIP;
  });
  const cells = (row: HtmlElement) => childrenOf(row).filter((c): c is HtmlElement => isElement(c) && (c.name === 'td' || c.name === 'th')).map(textOf);
  const first = rows[0];
  const hasHeader = first !== undefined && childrenOf(first).every((c) => !isElement(c) || c.name === 'th');
  return { kind: 'table', header: hasHeader && first ? cells(first) : [], rows: (hasHeader ? rows.slice(1) : rows).map(cells) };
}
