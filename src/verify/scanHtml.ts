import { checkCss } from './checkCss.js';
import { childrenOf, isElement, siblingOf, type HtmlDocument, type HtmlElement, type HtmlNode } from './htmlDom.js';
import type { Finding, PageLink } from './types.js';
import { hasScheme, isScriptUrl } from './urls.js';

/** Attributes through which an element makes the browser load something. */
const ASSET_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  link: ['href'],
  img: ['src', 'srcset'],
  source: ['src', 'srcset'],
  iframe: ['src'],
  frame: ['src'],
  embed: ['src'],
  object: ['data'],
  video: ['src', 'poster'],
  audio: ['src'],
  track: ['src'],
  input: ['src'],
  image: ['href', 'xlink:href'],
  use: ['href', 'xlink:href'],
  feimage: ['href', 'xlink:href'],
};

const MERMAID_MARK = 'mermaid-source';

export interface HtmlScan {
  anchors: Set<string>;
  links: PageLink[];
  /** Relative targets of url()/@import in inline CSS. */
  cssReferences: string[];
  findings: Finding[];
}

/**
 * Everything about an HTML tree that is not its reading structure: ids, links, assets, scripts,
 * inline CSS and diagrams. Used for HTML pages and for raw HTML inside Markdown.
 */
export function scanHtml(document: HtmlDocument, file: string, options: { diagrams: boolean }): HtmlScan {
  const scan: HtmlScan = { anchors: new Set(), links: [], cssReferences: [], findings: [] };
  const visit = (node: HtmlNode, inSvg: boolean) => {
    if (!isElement(node)) return;
    const name = node.name.toLowerCase();
    checkElement(node, name, file, scan);
    if (name === 'svg' && !inSvg && options.diagrams) checkSvg(node, file, scan);
    for (const child of childrenOf(node)) visit(child, inSvg || name === 'svg');
  };
  for (const child of childrenOf(document)) visit(child, false);
  return scan;
}

function checkElement(node: HtmlElement, name: string, file: string, scan: HtmlScan): void {
  const add = (finding: string) => scan.findings.push({ file, message: finding });
  if (name === 'script') add(`contains a <script> element${node.attribs['src'] ? ` (src="${node.attribs['src']}")` : ''}; the document must work without JavaScript`);
  if (name === 'base') add('contains a <base> element, which changes where every relative link points');
  if (name === 'meta' && (node.attribs['http-equiv'] ?? '').toLowerCase() === 'refresh') add('contains a <meta http-equiv="refresh"> redirect');
  for (const [attribute, value] of Object.entries(node.attribs)) {
    if (/^on[a-z]+$/i.test(attribute)) add(`<${name}> has an inline event handler ${attribute}="…"; the document must be script-free`);
    if (attribute === 'style') {
      const css = checkCss(value, file, `a style attribute on <${name}>`);
      scan.findings.push(...css.findings);
      scan.cssReferences.push(...css.references);
    }
  }
  for (const key of ['id', ...(name === 'a' ? ['name'] : [])]) {
    const id = node.attribs[key];
    if (id === undefined) continue;
    if (key === 'id' && scan.anchors.has(id)) add(`has the id "${id}" more than once, so links to it are ambiguous`);
    scan.anchors.add(id);
  }
  if (name === 'style') {
    const css = checkCss(childrenOf(node).map((c) => ('data' in c ? String(c.data) : '')).join(''), file, 'an inline <style> block');
    scan.findings.push(...css.findings);
    scan.cssReferences.push(...css.references);
  }
  if (name === 'a' && node.attribs['href'] !== undefined) {
    const href = node.attribs['href'];
    if (isScriptUrl(href)) add(`<a> links to a script URL "${href.slice(0, 40)}"`);
    else scan.links.push({ href, kind: 'link', via: '<a>' });
  }
  for (const attribute of ASSET_ATTRIBUTES[name] ?? []) {
    const value = node.attribs[attribute];
    if (value === undefined) continue;
    const urls = attribute === 'srcset' ? value.split(',').map((part) => part.trim().split(/\s+/)[0] ?? '') : [value];
    for (const url of urls.filter((u) => u !== '')) {
      if (name === 'link' && !isLoadingLink(node)) {
        scan.links.push({ href: url, kind: 'link', via: '<link>' });
      } else if (hasScheme(url) && !/^data:/i.test(url)) {
        const what = name === 'link' ? `stylesheet or asset (<link rel="${node.attribs['rel'] ?? ''}">)` : `<${name} ${attribute}>`;
        add(`loads an external ${what} from ${url}; the document must be self-contained`);
      } else if (!url.startsWith('#') && !/^data:/i.test(url)) {
        scan.links.push({ href: url, kind: 'asset', via: `<${name} ${attribute}>` });
      }
    }
  }
}

/** <link rel="canonical"> and friends are metadata; stylesheet, icon, preload and the like are fetched. */
function isLoadingLink(node: HtmlElement): boolean {
  const rel = (node.attribs['rel'] ?? '').toLowerCase().split(/\s+/);
  return rel.some((r) => ['stylesheet', 'icon', 'preload', 'prefetch', 'modulepreload', 'manifest', 'apple-touch-icon', 'mask-icon', 'import'].includes(r));
}

/** Each diagram is a responsive SVG with its Mermaid source in a comment right beside it. */
function checkSvg(node: HtmlElement, file: string, scan: HtmlScan): void {
  const label = node.attribs['id'] ? `the SVG "${node.attribs['id']}"` : 'an SVG';
  if (!node.attribs['viewbox']) scan.findings.push({ file, message: `${label} has no viewBox, so it cannot scale with the page` });
  const besideIt = [siblingOf(node, 'prev'), siblingOf(node, 'next')];
  const hasSource = besideIt.some((sibling) => sibling?.type === 'comment' && String(sibling.data).trim().startsWith(MERMAID_MARK));
  if (!hasSource) scan.findings.push({ file, message: `${label} has no Mermaid source comment (<!-- ${MERMAID_MARK} … -->) beside it, so it cannot be regenerated` });
}
