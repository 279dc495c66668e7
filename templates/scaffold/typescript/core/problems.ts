import { LeaseLostError, StoreUnavailableError, type IdempotencyPolicy } from './types.js';

/** RFC 9457 problem details, as the IETF Idempotency-Key draft recommends for its error responses. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** Seconds for a Retry-After header, when a retry can succeed. */
  readonly retryAfterSeconds?: number;
}

export type ProblemKind =
  | 'key-missing'
  | 'key-invalid'
  | 'key-mismatch'
  | 'in-flight'
  | 'store-unavailable'
  | 'lease-lost'
  | 'outcome-unknown'
  | 'response-not-replayable'
  | 'principal-missing';

/**
 * Details never echo the key, the fingerprint or the stored body: confirming misuse is enough. `keyField` is the form
 * field an action posted by a server-rendered form also takes its key from.
 */
export function problemFor(
  kind: ProblemKind,
  policy: IdempotencyPolicy,
  retryAfterSeconds = policy.retryAfterSeconds,
  keyField?: string,
): Problem {
  const carrier =
    keyField === undefined
      ? `${policy.keyHeader} header`
      : `${policy.keyHeader} header or ${keyField} form field`;
  const type = `${policy.problemTypeBase.replace(/\/+$/, '')}/${kind}`;
  switch (kind) {
    case 'key-missing':
      return {
        type,
        title: 'Idempotency-Key is missing',
        status: 400,
        detail: `This operation requires an ${carrier}.`,
      };
    case 'key-invalid':
      return {
        type,
        title: 'Idempotency-Key is malformed',
        status: 400,
        detail: `The ${keyField === undefined ? policy.keyHeader : carrier} must be sent once, as 1-${policy.maxKeyLength} printable ASCII characters without spaces, commas or inner double quotes (optionally inside one pair of double quotes).`,
      };
    case 'key-mismatch':
      return {
        type,
        title: 'Idempotency-Key reused',
        status: policy.mismatchStatus,
        detail: 'This key was already used with a different request. Use a new key for a new request.',
      };
    case 'in-flight':
      return {
        type,
        title: 'Request in progress',
        status: 409,
        detail: 'A request with this key is still being processed. Retry later to receive its result.',
        retryAfterSeconds,
      };
    case 'lease-lost':
      return {
        type,
        title: 'Request taken over',
        status: 409,
        detail: 'Another attempt with this key took over processing. Retry to receive the recorded result.',
        retryAfterSeconds,
      };
    case 'store-unavailable':
      return {
        type,
        title: 'Service unavailable',
        status: 503,
        detail:
          'Duplicate protection is unavailable, so the request was not processed. Retry with the same key.',
        retryAfterSeconds,
      };
    case 'outcome-unknown':
      return {
        type,
        title: 'Outcome unknown',
        status: 503,
        detail:
          'The request may have been processed, but its result could not be recorded. Retry later with the same key to receive the result; do not use a new key.',
        retryAfterSeconds,
      };
    case 'response-not-replayable':
      return {
        type,
        title: 'Result not replayable',
        status: 409,
        detail:
          'A request with this key was already processed, but its response was too large to keep. Do not retry with this key; read the resource instead.',
      };
    case 'principal-missing':
      return {
        type,
        title: 'Authentication required',
        status: 401,
        detail: 'Idempotency keys are scoped to the caller; this request has no authenticated caller.',
      };
  }
}

/**
 * The answer when a response could not be recorded after the action ran. Only a StoreUnavailableError means
 * "not processed" (transactional mode rolled everything back); anything else may have taken effect.
 */
export function failureProblem(error: unknown, policy: IdempotencyPolicy): Problem {
  if (error instanceof LeaseLostError) return problemFor('lease-lost', policy);
  if (error instanceof StoreUnavailableError) return problemFor('store-unavailable', policy);
  return problemFor('outcome-unknown', policy);
}
