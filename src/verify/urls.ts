/**
 * URL policy for delivered documents. Browsers ignore tabs and newlines anywhere in a URL and leading or
 * trailing controls and spaces, so "java&#9;script:" is javascript: — schemes are read after the same cleanup.
 */
const STRIPPED_INSIDE = /[\t\n\r]/g;
// eslint-disable-next-line no-control-regex -- the characters browsers strip are the point
const STRIPPED_AROUND = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/** The URL as a browser reads it. */
export function normalizeUrl(href: string): string {
  return href.replace(STRIPPED_INSIDE, '').replace(STRIPPED_AROUND, '');
}

/** The lower-case scheme, or undefined for a relative URL. */
export function schemeOf(href: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):/i.exec(normalizeUrl(href))?.[1]?.toLowerCase();
}

/** Anything with a scheme or a protocol-relative "//host" leaves the document. */
export function hasScheme(href: string): boolean {
  const url = normalizeUrl(href);
  return schemeOf(url) !== undefined || url.startsWith('//') || url.startsWith('\\\\');
}

export function isNetworkUrl(href: string): boolean {
  const url = normalizeUrl(href);
  return url.startsWith('//') || /^(https?|ftp|wss?):/i.test(url);
}

/** Where a URL sits decides what it may be: navigation, an embedded image, or another loaded resource. */
export type UrlRole = 'link' | 'image' | 'resource';

const ALLOWED: Readonly<Record<UrlRole, ReadonlySet<string>>> = {
  // Navigation may leave the document for the web or mail; file: is reported as an absolute path elsewhere.
  link: new Set(['http', 'https', 'mailto', 'file']),
  // Images may be inline data (the document stays self-contained); anything remote is reported by the asset checks.
  image: new Set(['data', 'http', 'https', 'file']),
  // Frames, objects, embeds, media: no inline data (a data: frame is a page of its own, with its own scripts).
  resource: new Set(['http', 'https', 'file']),
};

/** Why this URL is refused in this role, or undefined when its scheme is allowed (relative URLs always are). */
export function schemeProblem(href: string, role: UrlRole): string | undefined {
  const scheme = schemeOf(href);
  if (scheme === undefined || ALLOWED[role].has(scheme)) return undefined;
  const shown = JSON.stringify(normalizeUrl(href).slice(0, 40));
  if (scheme === 'javascript' || scheme === 'vbscript') return `a script URL ${shown}`;
  if (scheme === 'data') return `an inline data: URL ${shown}, allowed only for images`;
  return `the URL ${shown} with the scheme ${scheme}:, which is not allowed (${[...ALLOWED[role]].filter((s) => s !== 'file').join(', ')} or a relative link)`;
}
