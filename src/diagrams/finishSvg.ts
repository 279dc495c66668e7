import { escapeXml } from './escapeXml.js';
import { namespaceSvgIds } from './namespaceSvgIds.js';
import { scopeSvgCss } from './scopeSvgCss.js';

export interface SvgMeta {
  /** Figure id: prefix of every id inside the SVG; the root element gets `${id}-svg`. */
  id: string;
  title: string;
  desc: string;
}

/**
 * Renderer-independent finishing of an SVG before it is inlined into the document: no network
 * imports, ids unique per figure, styles scoped to the figure, responsive sizing, an accessible
 * name, and coordinates rounded so output bytes do not depend on floating-point noise.
 */
export interface FinishOptions {
  /** Whether the renderer's CSS still needs scoping to the root id. */
  scopeCss: boolean;
  /** Largest on-page size relative to the viewBox, so labels can reach ~14px when the page is wide enough. */
  maxScale?: number;
}

export function finishSvg(raw: string, meta: SvgMeta, options: FinishOptions): string {
  const rootId = `${meta.id}-svg`;
  let svg = raw.trim().replace(/<\?xml[^>]*\?>\s*/, '');
  svg = svg.replace(/@import\s+(?:url\([^)]*\)|"[^"]*"|'[^']*')[^;]*;?/g, '');
  if (options.scopeCss) svg = scopeSvgCss(svg, rootId);
  svg = namespaceSvgIds(svg, meta.id);
  svg = svg.replace(/<title[\s\S]*?<\/title>|<desc[\s\S]*?<\/desc>/g, '');
  svg = roundCoordinates(svg);
  svg = replaceRootTag(svg, meta, rootId, options.maxScale ?? 1);
  assertInert(svg);
  return svg;
}

function replaceRootTag(svg: string, meta: SvgMeta, rootId: string, maxScale: number): string {
  const open = /^<svg\b[^>]*>/.exec(svg);
  const viewBox = open && /\sviewBox="([^"]+)"/.exec(open[0]);
  if (!open || !viewBox) throw new Error('Bug: the diagram renderer returned an SVG without a viewBox');
  const [, , width] = viewBox[1]!.trim().split(/[\s,]+/).map(Number);
  if (width === undefined || !Number.isFinite(width) || width <= 0) throw new Error(`Bug: unusable viewBox "${viewBox[1]}"`);
  // width="100%" plus a max-width: shrinks to fit narrow pages, never blows labels up past the
  // intended size on wide ones.
  const root =
    `<svg xmlns="http://www.w3.org/2000/svg" id="${rootId}" class="diagram" viewBox="${viewBox[1]}" width="100%" ` +
    `role="img" aria-labelledby="${meta.id}-title ${meta.id}-desc" style="max-width:${Math.ceil(width * maxScale)}px;height:auto">`;
  const a11y = `\n<title id="${meta.id}-title">${escapeXml(meta.title)}</title>\n<desc id="${meta.id}-desc">${escapeXml(meta.desc)}</desc>`;
  return root + a11y + svg.slice(open[0].length);
}

const GEOMETRY = /\s(x|y|x1|y1|x2|y2|cx|cy|r|rx|ry|width|height|points|d|dx|dy|viewBox|refX|refY|markerWidth|markerHeight|transform|stroke-width|font-size)="([^"]*)"/g;

function roundCoordinates(svg: string): string {
  return svg.replace(GEOMETRY, (_m, name: string, value: string) => ` ${name}="${value.replace(/-?\d+\.\d+(?:e-?\d+)?/g, round)}"`);
}

function round(n: string): string {
  const r = Math.round(Number(n) * 100) / 100;
  return String(Object.is(r, -0) ? 0 : r);
}

/**
 * The document promises no script and no network access; check the SVG itself rather than trust
 * the renderer. Text content is already escaped, so only real tags and style blocks are examined.
 */
function assertInert(svg: string): void {
  for (const tag of svg.matchAll(/<([a-zA-Z][\w:-]*)((?:\s+[\w:-]+(?:="[^"]*")?)*)\s*\/?>/g)) {
    const name = tag[1]!.toLowerCase();
    if (name === 'script' || name === 'iframe' || name === 'image' || name === 'foreignobject') {
      throw new Error(`Bug: diagram SVG contains <${name}>`);
    }
    for (const attr of tag[2]!.matchAll(/([\w:-]+)(?:="([^"]*)")?/g)) {
      const attrName = attr[1]!.toLowerCase();
      if (attrName.startsWith('on')) throw new Error(`Bug: diagram SVG has an event handler attribute ${attrName}`);
      if ((attrName === 'href' || attrName.endsWith(':href') || attrName === 'src') && !(attr[2] ?? '').startsWith('#')) {
        throw new Error(`Bug: diagram SVG references an external resource in ${attrName}`);
      }
      // data-* and aria-* carry escaped label text, which may legitimately read "url(".
      if (!/^(data|aria)-/.test(attrName) && /url\(\s*['"]?(?!#)/i.test(attr[2] ?? '')) {
        throw new Error(`Bug: diagram SVG references an external resource in ${attrName}`);
      }
    }
  }
  for (const style of svg.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)) {
    if (/@import|url\(\s*['"]?(?!#)/i.test(style[1]!)) throw new Error('Bug: diagram CSS loads an external resource');
  }
}
