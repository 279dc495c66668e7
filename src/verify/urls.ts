/** Anything with a scheme or a protocol-relative "//host" leaves the document. */
export function hasScheme(href: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//');
}

export function isNetworkUrl(href: string): boolean {
  return href.startsWith('//') || /^(https?|ftp|wss?):/i.test(href);
}

/** Schemes that run code when followed. */
export function isScriptUrl(href: string): boolean {
  return /^\s*(javascript|vbscript|data):/i.test(href);
}
