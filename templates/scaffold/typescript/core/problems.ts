import type { IdempotencyPolicy } from './types.js';

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
  | 'principal-missing';

/** Details never echo the key, the fingerprint or the stored body: confirming misuse is enough. */
export function problemFor(
  kind: ProblemKind,
  policy: IdempotencyPolicy,
  retryAfterSeconds = policy.retryAfterSeconds,
): Problem {
  const type = `${policy.problemTypeBase.replace(/\/+$/, '')}/${kind}`;
  switch (kind) {
    case 'key-missing':
      return {
        type,
        title: 'Idempotency-Key is missing',
        status: 400,
        detail: `This operation requires an ${policy.keyHeader} header.`,
      };
    case 'key-invalid':
      return {
        type,
        title: 'Idempotency-Key is malformed',
        status: 400,
        detail: `The ${policy.keyHeader} must be 1-${policy.maxKeyLength} printable characters.`,
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
    case 'principal-missing':
      return {
        type,
        title: 'Authentication required',
        status: 401,
        detail: 'Idempotency keys are scoped to the caller; this request has no authenticated caller.',
      };
  }
}
