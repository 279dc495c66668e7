import { randomBytes } from 'node:crypto';
import { canonicalJson, sha256Hex } from './fingerprint.js';

export type KeyParseResult =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly problem: 'missing' | 'empty' | 'too-long' | 'invalid' };

/**
 * Parses an Idempotency-Key header against the grammar the design document states (POLICY.keyPattern): 1 to
 * maxLength printable ASCII characters without comma or whitespace; one pair of surrounding double quotes (the
 * IETF draft's structured-field form) is removed first. A header sent twice is rejected, whether it arrives as
 * an array or joined by the framework into "a, b" (the comma and space fail the grammar).
 */
export function parseIdempotencyKey(
  header: string | readonly string[] | undefined,
  maxLength: number,
  pattern: string,
): KeyParseResult {
  if (header === undefined) return { ok: false, problem: 'missing' };
  if (typeof header !== 'string')
    return header.length === 1
      ? parseIdempotencyKey(header[0], maxLength, pattern)
      : header.length === 0
        ? { ok: false, problem: 'missing' }
        : { ok: false, problem: 'invalid' };
  let key = header;
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (key.length === 0) return { ok: false, problem: 'empty' };
  if (key.length > maxLength) return { ok: false, problem: 'too-long' };
  if (!grammar(pattern).test(key)) return { ok: false, problem: 'invalid' };
  return { ok: true, key };
}

const compiled = new Map<string, RegExp>();
function grammar(pattern: string): RegExp {
  let regex = compiled.get(pattern);
  if (!regex) compiled.set(pattern, (regex = new RegExp(pattern)));
  return regex;
}

/**
 * A server-side key for requests that carry no client key (webhooks, messages, jobs): stable for the same values,
 * 128 bits of SHA-256, prefixed with the action so different actions never share a key.
 */
export function deriveKey(codeName: string, values: Readonly<Record<string, unknown>>): string {
  return `${codeName}_${sha256Hex(canonicalJson(values)).slice(0, 32)}`;
}

/**
 * The key a downstream provider sees for one claim (and saga step): SHA-256 hex (64 characters) of the canonical
 * JSON array [scope, key, action, step], step 0 for a single call. Scoped, so two principals who send the same
 * Idempotency-Key never share a provider key; deterministic, so a retry or a takeover sends the same one and the
 * provider deduplicates. 64 characters fit Stripe (255) and Adyen (64); PayPal gets a UUIDv5 of it.
 */
export function providerKeyBase(
  claim: { readonly scope: string; readonly key: string; readonly action: string },
  step = 0,
): string {
  return sha256Hex(canonicalJson([claim.scope, claim.key, claim.action, step]));
}

/** For log lines and traces: a short hash correlates requests without revealing the key itself. */
export function keyHint(key: string): string {
  return sha256Hex(key).slice(0, 8);
}

/**
 * A fresh fencing token, for the stores that mint their own (PostgreSQL takes one from a sequence): a random
 * version 4 UUID (36 characters) from randomBytes, because randomUUID needs Node 14.17 and the typings of that
 * release.
 */
export function newFencingToken(): string {
  return randomUuid();
}

/**
 * A key for one rendering of a form whose action takes its key from a hidden field: a random version 4 UUID. Each
 * render is one intent, so a double submit or a resubmission of the same page sends the same key, and a form
 * rendered again sends a new one. Put it where templates see it (Express: `app.locals.idempotencyKey =
 * newIdempotencyKey`) and write it into the form as `<input type="hidden" name="idempotencyKey" value="…">`.
 */
export function newIdempotencyKey(): string {
  return randomUuid();
}

function randomUuid(): string {
  const bytes = randomBytes(16);
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x40, 6);
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
