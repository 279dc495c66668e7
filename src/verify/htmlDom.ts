import { DomUtils, parseDocument } from 'htmlparser2';

/** DOM types taken from htmlparser2's own result, so no transitive package is imported directly. */
export type HtmlDocument = ReturnType<typeof parseDocument>;
export type HtmlNode = HtmlDocument['children'][number];
export type HtmlElement = Extract<HtmlNode, { attribs: Record<string, string> }>;

export function parseHtml(text: string): HtmlDocument {
  return parseDocument(text, { decodeEntities: true });
}

export const isElement = (node: HtmlNode): node is HtmlElement => DomUtils.isTag(node);

export function textOf(node: HtmlNode): string {
  return DomUtils.textContent(node).replace(/\s+/g, ' ').trim();
}

export function childrenOf(node: HtmlNode | HtmlDocument): HtmlNode[] {
  return 'children' in node ? (node.children as HtmlNode[]) : [];
}

/** Nearest sibling that is not whitespace, in one direction. */
export function siblingOf(node: HtmlNode, direction: 'prev' | 'next'): HtmlNode | null {
  let current = direction === 'prev' ? node.prev : node.next;
  while (current && current.type === 'text' && DomUtils.getText(current).trim() === '') current = direction === 'prev' ? current.prev : current.next;
  return current as HtmlNode | null;
}
