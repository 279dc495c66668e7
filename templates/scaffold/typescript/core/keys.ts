import { canonicalJson, sha256Hex } from './fingerprint.js';

export type KeyParseResult =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly problem: 'missing' | 'empty' | 'too-long' | 'invalid' };

// Control characters (and DEL) would corrupt logs and headers; they are never part of a legitimate key.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Parses an Idempotency-Key header value. The IETF draft defines it as a structured-field string ("abc"); plain
 * unquoted values are also accepted because most clients send them that way.
 */
export function parseIdempotencyKey(
  header: string | readonly string[] | undefined,
  maxLength: number,
): KeyParseResult {
  if (header === undefined) return { ok: false, problem: 'missing' };
  // A repeated header is ambiguous: which value would the retry send? Reject rather than guess.
  if (typeof header !== 'string')
    return header.length === 1
      ? parseIdempotencyKey(header[0], maxLength)
      : { ok: false, problem: 'invalid' };
  let key = header.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const inner = key.slice(1, -1);
    // sf-string: printable ASCII, with only \" and \\ as escapes.
    if (!/^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/.test(inner)) return { ok: false, problem: 'invalid' };
    key = inner.replace(/\\(["\\])/g, '$1');
  }
  if (key.length === 0) return { ok: false, problem: 'empty' };
  if (key.length > maxLength) return { ok: false, problem: 'too-long' };
  if (CONTROL.test(key)) return { ok: false, problem: 'invalid' };
  return { ok: true, key };
}

/**
 * A server-side key for requests that carry no client key (webhooks, messages, jobs): stable for the same values,
 * 128 bits of SHA-256, prefixed with the action so different actions never share a key.
 */
export function deriveKey(codeName: string, values: Readonly<Record<string, unknown>>): string {
  return `${codeName}_${sha256Hex(canonicalJson(values)).slice(0, 32)}`;
}

/** For log lines and traces: a short hash correlates requests without revealing the key itself. */
export function keyHint(key: string): string {
  return sha256Hex(key).slice(0, 8);
}
