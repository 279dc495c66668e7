/**
 * Just enough CommonMark inline handling for verification: the text a heading or cell renders to
 * (for GitHub slugs and content checks) and the links a line contains. Code spans are opaque.
 */

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body.startsWith('#x') || body.startsWith('#X')) return String.fromCodePoint(parseInt(body.slice(2), 16));
    if (body.startsWith('#')) return String.fromCodePoint(Number(body.slice(1)));
    return ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/** Splits a line into code spans and the rest, so markup inside `code` is never interpreted. */
export function splitCodeSpans(line: string): Array<{ code: boolean; text: string }> {
  const parts: Array<{ code: boolean; text: string }> = [];
  let rest = line;
  for (;;) {
    const open = /(?<!\\)(`+)/.exec(rest);
    if (!open) break;
    const fence = open[1]!;
    const close = rest.indexOf(fence, open.index + fence.length);
    // A backtick run with no matching closer is literal text.
    if (close === -1 || rest[close + fence.length] === '`') {
      parts.push({ code: false, text: rest.slice(0, open.index + fence.length) });
      rest = rest.slice(open.index + fence.length);
      continue;
    }
    parts.push({ code: false, text: rest.slice(0, open.index) });
    let inner = rest.slice(open.index + fence.length, close);
    if (inner.length > 1 && inner.startsWith(' ') && inner.endsWith(' ') && inner.trim() !== '') inner = inner.slice(1, -1);
    parts.push({ code: true, text: inner });
    rest = rest.slice(close + fence.length);
  }
  parts.push({ code: false, text: rest });
  return parts;
}

/** The rendered text of inline Markdown: no emphasis markers, links reduced to their text, escapes resolved. */
export function inlineText(markdown: string): string {
  return splitCodeSpans(markdown)
    .map((part) => (part.code ? part.text : plainText(part.text)))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}

function plainText(text: string): string {
  // Raw inline HTML renders as nothing, but a backslash-escaped "\<img>" is visible text and part of the slug.
  const withoutLinks = text.replace(/!?\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)/g, '$1').replace(/(?<!\\)<\/?[a-z][^>]*>/gi, '');
  let out = '';
  for (let i = 0; i < withoutLinks.length; i++) {
    const ch = withoutLinks[i]!;
    const next = withoutLinks[i + 1];
    if (ch === '\\' && next !== undefined && /[!-/:-@[-`{-~]/.test(next)) {
      out += next;
      i++;
    } else if (ch === '*') {
      continue;
    } else if (ch === '_' && !(/[\p{L}\p{N}]/u.test(withoutLinks[i - 1] ?? '') && /[\p{L}\p{N}]/u.test(next ?? ''))) {
      // Emphasis delimiters disappear; an underscore inside a word (snake_case) is literal text.
      continue;
    } else {
      out += ch;
    }
  }
  return decodeEntities(out);
}

/** Inline links and images on a line, outside code spans. */
export function inlineLinks(markdown: string): Array<{ href: string; image: boolean }> {
  const links: Array<{ href: string; image: boolean }> = [];
  for (const part of splitCodeSpans(markdown)) {
    if (part.code) continue;
    for (const match of part.text.matchAll(/(!?)(?<!\\)\[((?:\\.|[^\]\\])*)\]\(\s*(<[^>]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+"[^"]*")?\s*\)/g)) {
      const raw = match[3]!;
      links.push({ href: raw.startsWith('<') ? raw.slice(1, -1) : raw, image: match[1] === '!' });
    }
  }
  return links;
}
