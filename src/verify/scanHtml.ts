import { checkCss } from './checkCss.js';
import { childrenOf, isElement, siblingOf, SKIP, walkDom, type HtmlDocument, type HtmlElement } from './htmlDom.js';
import type { Finding, PageLink } from './types.js';
import { hasScheme, normalizeUrl, schemeOf, schemeProblem, type UrlRole } from './urls.js';

/** Attributes through which an element makes the browser load something, and what that something may be. */
const ASSET_ATTRIBUTES: Readonly<Record<string, Readonly<Record<string, UrlRole>>>> = {
  link: { href: 'resource' },
  img: { src: 'image', srcset: 'image' },
  source: { src: 'image', srcset: 'image' },
  iframe: { src: 'resource' },
  frame: { src: 'resource' },
  embed: { src: 'resource' },
  object: { data: 'resource' },
  video: { src: 'resource', poster: 'image' },
  audio: { src: 'resource' },
  track: { src: 'resource' },
  input: { src: 'image' },
  image: { href: 'image', 'xlink:href': 'image' },
  use: { href: 'resource', 'xlink:href': 'resource' },
  feimage: { href: 'image', 'xlink:href': 'image' },
};

/** Attributes a reader follows (HTML and SVG links, form targets, citations). */
const LINK_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href', 'xlink:href'],
  area: ['href'],
  form: ['action'],
  button: ['formaction'],
  input: ['formaction'],
  blockquote: ['cite'],
  q: ['cite'],
  del: ['cite'],
  ins: ['cite'],
};

/** Any other attribute that takes a URL on some element: its scheme is checked wherever it appears. */
const URL_ATTRIBUTES = new Set(['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'poster', 'data', 'cite', 'background', 'longdesc', 'lowsrc', 'dynsrc', 'manifest', 'codebase', 'archive', 'ping', 'profile', 'classid', 'usemap']);

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
  walkDom(childrenOf(document), false, (node, inSvg) => {
    if (!isElement(node)) return SKIP;
    const name = node.name.toLowerCase();
    checkElement(node, name, file, scan);
    if (name === 'svg' && !inSvg && options.diagrams) checkSvg(node, file, scan);
    return inSvg || name === 'svg';
  });
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
  const checked = new Set<string>();
  const refused = (value: string, role: UrlRole, where: string): boolean => {
    const problem = schemeProblem(value, role);
    if (problem) add(`${where} uses ${problem}`);
    return problem !== undefined;
  };
  for (const attribute of LINK_ATTRIBUTES[name] ?? []) {
    const href = node.attribs[attribute];
    if (href === undefined) continue;
    checked.add(attribute);
    const via = attribute === 'href' ? `<${name}>` : `<${name} ${attribute}>`;
    if (!refused(href, 'link', via)) scan.links.push({ href: normalizeUrl(href), kind: 'link', via });
  }
  for (const [attribute, role] of Object.entries(ASSET_ATTRIBUTES[name] ?? {})) {
    const value = node.attribs[attribute];
    if (value === undefined) continue;
    checked.add(attribute);
    const urls = attribute === 'srcset' ? value.split(',').map((part) => part.trim().split(/\s+/)[0] ?? '') : [value];
    for (const url of urls.map(normalizeUrl).filter((u) => u !== '')) {
      if (name === 'link' && !isLoadingLink(node)) {
        if (!refused(url, 'link', '<link>')) scan.links.push({ href: url, kind: 'link', via: '<link>' });
      } else if (refused(url, name === 'link' && isIconLink(node) ? 'image' : role, `<${name} ${attribute}>`)) {
        continue;
      } else if (hasScheme(url) && schemeOf(url) !== 'data') {
        const what = name === 'link' ? `stylesheet or asset (<link rel="${node.attribs['rel'] ?? ''}">)` : `<${name} ${attribute}>`;
        add(`loads an external ${what} from ${url}; the document must be self-contained`);
      } else if (!url.startsWith('#') && schemeOf(url) !== 'data') {
        scan.links.push({ href: url, kind: 'asset', via: `<${name} ${attribute}>` });
      }
    }
  }
  for (const [attribute, value] of Object.entries(node.attribs)) {
    if (checked.has(attribute) || !URL_ATTRIBUTES.has(attribute)) continue;
    refused(value, 'link', `<${name} ${attribute}>`);
  }
  // SVG animation can rewrite a link after load: <set attributeName="href" to="javascript:…">.
  if ((name === 'set' || name === 'animate') && /^(xlink:)?href$/i.test(node.attribs['attributename'] ?? '')) {
    for (const attribute of ['to', 'from', 'values']) {
      for (const value of (node.attribs[attribute] ?? '').split(';')) if (value.trim() !== '') refused(value, 'link', `<${name} ${attribute}>`);
    }
  }
}

/** <link rel="canonical"> and friends are metadata; stylesheet, icon, preload and the like are fetched. */
function isLoadingLink(node: HtmlElement): boolean {
  const rel = (node.attribs['rel'] ?? '').toLowerCase().split(/\s+/);
  return rel.some((r) => ['stylesheet', 'icon', 'preload', 'prefetch', 'modulepreload', 'manifest', 'apple-touch-icon', 'mask-icon', 'import'].includes(r));
}

function isIconLink(node: HtmlElement): boolean {
  return (node.attribs['rel'] ?? '').toLowerCase().split(/\s+/).some((r) => r.endsWith('icon'));
}

/** Each diagram is a responsive SVG with its Mermaid source in a comment right beside it. */
function checkSvg(node: HtmlElement, file: string, scan: HtmlScan): void {
  const label = node.attribs['id'] ? `the SVG "${node.attribs['id']}"` : 'an SVG';
  if (!node.attribs['viewbox']) scan.findings.push({ file, message: `${label} has no viewBox, so it cannot scale with the page` });
  const besideIt = [siblingOf(node, 'prev'), siblingOf(node, 'next')];
  const hasSource = besideIt.some((sibling) => sibling?.type === 'comment' && String(sibling.data).trim().startsWith(MERMAID_MARK));
  if (!hasSource) scan.findings.push({ file, message: `${label} has no Mermaid source comment (<!-- ${MERMAID_MARK} … -->) beside it, so it cannot be regenerated` });
}
