// eslint-disable-next-line no-control-regex -- escaping control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Names from a repository (file names, routes, identifiers) as safe terminal text: control characters, line
 * separators and bidi overrides become visible escapes, so a file called "x\u001b[2J.ts" cannot clear the
 * screen or forge output. Idempotent; everything else is kept as written.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
