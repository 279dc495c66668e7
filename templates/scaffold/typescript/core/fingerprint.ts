import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Request fingerprint: SHA-256 (hex) of canonical JSON holding the action's significant fields, the HTTP
 * method and the route template. Canonical = object keys sorted at every level, so key order and whitespace in
 * the request never change the hash; fields outside the list (timestamps, trace ids) are ignored by design.
 */

export interface FingerprintInput {
  readonly method: string;
  readonly route: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return 'null';
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function computeFingerprint(input: FingerprintInput): string {
  return sha256Hex(
    canonicalJson({ fields: input.fields, method: input.method.toUpperCase(), route: input.route }),
  );
}

/** Constant-time, so response timing never reveals how much of a stored fingerprint a guess matched. */
export function fingerprintsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Reads a field path such as "amount", "amount.value" or "items[].sku" ("[]" maps over an array).
 * Missing values read as null, so an absent field and an explicit null are the same intent.
 */
export function readField(source: unknown, path: string): unknown {
  let current: unknown[] = [source];
  let mapped = false;
  for (const raw of path.split('.')) {
    const isArray = raw.endsWith('[]');
    const name = isArray ? raw.slice(0, -2) : raw;
    // A loop rather than flatMap (ES2019) and hasOwnProperty rather than Object.hasOwn (ES2022): the code compiles
    // under the lib of projects from before either.
    const next: unknown[] = [];
    for (const item of current) {
      const value =
        item !== null && typeof item === 'object' && Object.prototype.hasOwnProperty.call(item, name)
          ? (item as Record<string, unknown>)[name]
          : undefined;
      if (!isArray) next.push(value);
      else if (Array.isArray(value)) next.push(...value);
    }
    current = next;
    mapped = mapped || isArray;
  }
  if (mapped) return current.map((item) => item ?? null);
  return current[0] ?? null;
}

/**
 * Looks each field up in the route parameters first (authoritative), then the body, then the query string.
 * "body" that no source holds as a field of its own is the whole request body: the fallback when no fields were
 * named, so a key reused with a different body is a mismatch, never a replay of the first answer.
 */
export function pickFields(
  fields: readonly string[],
  sources: { readonly params?: unknown; readonly body?: unknown; readonly query?: unknown },
): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    let value: unknown = null;
    for (const source of [sources.params, sources.body, sources.query]) {
      value = readField(source, field);
      if (value !== null && !(Array.isArray(value) && value.length === 0)) break;
    }
    if (field === 'body' && value === null && sources.body !== undefined) value = sources.body;
    picked[field] = value;
  }
  return picked;
}
