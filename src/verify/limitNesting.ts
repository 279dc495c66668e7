/**
 * The HTML parser keeps its open-element stack in an array it shifts and unshifts, so each level of nesting
 * costs time proportional to the depth: 200,000 nested elements take minutes. No document needs more than a
 * few dozen levels, so tags past MAX_DEPTH are dropped (their text stays) in one linear pass before parsing,
 * and the page gets a finding: verify still fails such a page, it just does so at once.
 */
export const MAX_DEPTH = 1_000;

// Elements that never nest (void) or whose end tag is optional: they do not count towards depth.
const FLAT = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'option', 'optgroup', 'thead', 'tbody', 'tfoot', 'colgroup', 'caption', 'rt', 'rp', 'html', 'head', 'body']);
const TAG = /<!--[\s\S]*?(?:-->|$)|<(\/?)([a-zA-Z][^\s/>]*)(?:[^>"']|"[^"]*"|'[^']*')*?(\/?)>/g;

export function limitNesting(html: string): { html: string; deepest?: number } {
  let depth = 0;
  let deepest = 0;
  let out = '';
  let last = 0;
  for (const match of html.matchAll(TAG)) {
    const [whole, closing, rawName, selfClosing] = match;
    if (rawName === undefined) continue;
    const name = rawName.toLowerCase();
    if (FLAT.has(name) || selfClosing) continue;
    const level = closing ? depth : depth + 1;
    depth = closing ? Math.max(0, depth - 1) : depth + 1;
    deepest = Math.max(deepest, level);
    if (level > MAX_DEPTH) {
      out += html.slice(last, match.index);
      last = match.index + whole.length;
    }
  }
  if (deepest <= MAX_DEPTH) return { html };
  return { html: out + html.slice(last), deepest };
}

export const nestingFinding = (deepest: number): string =>
  `nests elements ${deepest.toLocaleString('en-US')} levels deep; past ${MAX_DEPTH.toLocaleString('en-US')} levels the markup is not checked, so the page cannot be verified`;
