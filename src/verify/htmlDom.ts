import { DomUtils, parseDocument } from 'htmlparser2';

/** DOM types taken from htmlparser2's own result, so no transitive package is imported directly. */
export type HtmlDocument = ReturnType<typeof parseDocument>;
export type HtmlNode = HtmlDocument['children'][number];
export type HtmlElement = Extract<HtmlNode, { attribs: Record<string, string> }>;

export function parseHtml(text: string): HtmlDocument {
  return parseDocument(text, { decodeEntities: true });
}

export const isElement = (node: HtmlNode): node is HtmlElement => DomUtils.isTag(node);

export function childrenOf(node: HtmlNode | HtmlDocument): HtmlNode[] {
  return 'children' in node ? (node.children as HtmlNode[]) : [];
}

/** Returned by a walkDom visitor to skip the node's subtree. */
export const SKIP: unique symbol = Symbol('skip');

/**
 * Visits nodes in document order with an explicit stack, never recursion: a hand-edited page nested a
 * hundred thousand levels deep is checked like any other. `visit` returns the state for the node's children,
 * or SKIP.
 */
export function walkDom<State>(roots: readonly HtmlNode[], initial: State, visit: (node: HtmlNode, state: State) => State | typeof SKIP): void {
  const stack: Array<[HtmlNode, State]> = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i]!, initial]);
  while (stack.length > 0) {
    const [node, state] = stack.pop()!;
    const next = visit(node, state);
    if (next === SKIP) continue;
    const children = childrenOf(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, next]);
  }
}

/** Raw text of a subtree (code keeps its line breaks). */
export function rawTextOf(node: HtmlNode): string {
  let out = '';
  walkDom([node], undefined, (current) => {
    if (current.type === 'text') out += String(current.data);
    return isElement(current) || current.type === 'root' || current.type === 'cdata' ? undefined : SKIP;
  });
  return out;
}

export function textOf(node: HtmlNode): string {
  return rawTextOf(node).replace(/\s+/g, ' ').trim();
}

/** Nearest sibling that is not whitespace, in one direction. */
export function siblingOf(node: HtmlNode, direction: 'prev' | 'next'): HtmlNode | null {
  let current = direction === 'prev' ? node.prev : node.next;
  while (current && current.type === 'text' && DomUtils.getText(current).trim() === '') current = direction === 'prev' ? current.prev : current.next;
  return current as HtmlNode | null;
}
