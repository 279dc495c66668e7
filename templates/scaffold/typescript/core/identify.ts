import { refusedRequest, type IdempotentRequest } from './core.js';
import { computeFingerprint, pickFields } from './fingerprint.js';
import { deriveKey, parseIdempotencyKey } from './keys.js';
import { problemFor, type Problem } from './problems.js';
import type { ActionSettings, IdempotencyPolicy } from './types.js';

/** What every adapter reads from its framework's request, in one shape. */
export interface HttpRequestParts {
  readonly method: string;
  /** Every value of the key header as received (Node's `headersDistinct`), so a repeated header stays visible. */
  readonly keyHeader: string | readonly string[] | undefined;
  readonly params: unknown;
  readonly body: unknown;
  readonly query: unknown;
  /** Called only for scoped actions. */
  readonly principal: () => string | number | undefined;
}

export type Identified =
  | { readonly kind: 'pass' }
  | { readonly kind: 'refuse'; readonly problem: Problem }
  | { readonly kind: 'check'; readonly request: IdempotentRequest };

/**
 * The part of the protocol before the store: method check (another method passes through untouched, no record),
 * principal, key (header grammar or derived from fields) and fingerprint. The same code for every framework.
 * Log-only rollout: what would be refused goes on as a refused request, which the core runs and counts.
 */
export function identifyRequest(
  action: ActionSettings,
  policy: IdempotencyPolicy,
  parts: HttpRequestParts,
): Identified {
  if (!methodMatches(action, parts.method)) return { kind: 'pass' };
  const principal = action.scope === 'global' ? 'global' : parts.principal();
  const scope = principal === undefined ? '' : String(principal);
  const refuse = (problem: Problem): Identified =>
    action.rollout === 'log-only'
      ? { kind: 'check', request: refusedRequest(scope) }
      : { kind: 'refuse', problem };
  if (scope === '') return refuse(problemFor('principal-missing', policy));

  const body = parsedBody(parts.body);
  const sources = { params: parts.params, body, query: parts.query };
  let key: string;
  if (action.key.source === 'derived') {
    const values = pickFields(action.key.from ?? action.significantFields, sources);
    if (Object.values(values).some((value) => value === null))
      return refuse(problemFor('key-missing', policy));
    key = deriveKey(action.codeName, values);
  } else {
    const received = keyOf(action, parts.keyHeader, body);
    const parsed =
      received === MALFORMED
        ? ({ ok: false, problem: 'invalid' } as const)
        : parseIdempotencyKey(received, policy.maxKeyLength, policy.keyPattern);
    // `=== false`, not `!parsed.ok`: the union narrows that way even in projects without strictNullChecks.
    if (parsed.ok === false)
      return refuse(
        problemFor(
          parsed.problem === 'missing' ? 'key-missing' : 'key-invalid',
          policy,
          undefined,
          action.key.field,
        ),
      );
    key = parsed.key;
  }
  const fingerprint = computeFingerprint({
    method: action.method ?? parts.method,
    route: action.route,
    fields: pickFields(action.significantFields, sources),
  });
  return { kind: 'check', request: { scope, key, fingerprint } };
}

const MALFORMED = Symbol('malformed key field');

/**
 * The key header, or (for an action a server-rendered form posts) the form field named by `key.field` when no header
 * came: a string, or every value when the field was sent more than once (which the grammar then rejects). A field
 * the body parser turned into anything else (`idempotencyKey[a]=1` with qs) is malformed.
 */
function keyOf(
  action: ActionSettings,
  header: string | readonly string[] | undefined,
  body: unknown,
): string | readonly string[] | undefined | typeof MALFORMED {
  const field = action.key.field;
  if (header !== undefined || field === undefined || typeof body !== 'object' || body === null) return header;
  if (!Object.prototype.hasOwnProperty.call(body, field)) return undefined;
  const value: unknown = (body as Record<string, unknown>)[field];
  if (typeof value === 'string') return value;
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
    ? (value as string[])
    : MALFORMED;
}

/** The action's own method, or any method for a route declared as ALL (or without a method). */
export function methodMatches(action: ActionSettings, method: string): boolean {
  const declared = action.method?.toUpperCase();
  return declared === undefined || declared === 'ALL' || declared === method.toUpperCase();
}

/** Webhook routes often keep the raw body (for signature checks); key and fingerprint fields come from its JSON. */
function parsedBody(body: unknown): unknown {
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    try {
      return JSON.parse(body.toString()) as unknown;
    } catch {
      return undefined;
    }
  }
  return body;
}

/**
 * Node's `headersDistinct` (every value of each header, Node 18.3+); undefined on an older Node, and read through a
 * structural type because typings before @types/node 18.3 do not declare it.
 */
export function distinctHeaders(
  message: object,
): Readonly<Record<string, readonly string[] | undefined>> | undefined {
  return (message as { headersDistinct?: Record<string, string[] | undefined> }).headersDistinct;
}
