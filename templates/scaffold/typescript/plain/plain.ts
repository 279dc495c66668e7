import { AsyncLocalStorage } from 'node:async_hooks';
import {
  InFlightError,
  MismatchError,
  NotReplayableError,
  refusedRequest,
  type IdempotencyCore,
  type IdempotentRequest,
} from './core.js';
import { computeFingerprint, pickFields } from './fingerprint.js';
import { deriveKey, parseIdempotencyKey } from './keys.js';
import { problemFor, type Problem } from './problems.js';
import {
  LeaseLostError,
  OutcomeUnknownError,
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type IdempotencyPolicy,
  type Scope,
} from './types.js';

export type { IdempotencyContext } from './types.js';

type Principal = string | number | undefined;

/** One call of a protected function: who, which key, and the input that must not change under that key. */
export interface PlainCall {
  /** The principal that owns the key (user, account or tenant id); defaults to the options' resolver. Ignored for global actions. */
  readonly scope?: string | number | undefined;
  /** The client's idempotency key (same grammar as the header). Omit it for actions whose key is derived from fields. */
  readonly key?: string | undefined;
  /** The call's input: the action's significant fields are read from it (all of it when the action lists none). */
  readonly fingerprintInput?: unknown;
}

export interface PlainIdempotencyOptions {
  readonly core: IdempotencyCore;
  /** Who owns keys when a call passes no scope (e.g. from your request-scoped storage). Return undefined if unknown. */
  readonly principal: (scope: Exclude<Scope, 'global'>) => Principal | Promise<Principal>;
}

/** A protected function for one action: `await idempotency.createPayment({ scope, key, fingerprintInput }, work)`. */
export interface PlainIdempotent {
  <T>(call: PlainCall, work: (context: IdempotencyContext) => Promise<T>): Promise<T>;
  /** The same, and whether the result was replayed from the store rather than computed now. */
  detailed<T>(
    call: PlainCall,
    work: (context: IdempotencyContext) => Promise<T>,
  ): Promise<{ result: T; replayed: boolean }>;
}

/** The key is missing, or outside the Idempotency-Key grammar (1-255 printable ASCII, no comma or space). */
export class InvalidKeyError extends Error {
  constructor(readonly reason: 'missing' | 'empty' | 'too-long' | 'invalid') {
    super(`idempotency key is ${reason === 'missing' ? 'missing' : 'malformed'}`);
    this.name = 'InvalidKeyError';
  }
}

/** A scoped action was called without a principal. */
export class PrincipalMissingError extends Error {
  constructor() {
    super('idempotency keys are scoped to the caller, and there is no caller');
    this.name = 'PrincipalMissingError';
  }
}

/**
 * Where the wrapper sits behind HTTP after all: the problem+json answer the framework adapters give for each error
 * it throws, with the Retry-After they send (`retryAfterSeconds`): 503 for a store outage or an unknown outcome,
 * 409 while the key is in flight. Undefined for anything else: the wrapped function's own errors are yours.
 */
export function problemForError(error: unknown, policy: IdempotencyPolicy): Problem | undefined {
  if (error instanceof InvalidKeyError)
    return problemFor(error.reason === 'missing' ? 'key-missing' : 'key-invalid', policy);
  if (error instanceof PrincipalMissingError) return problemFor('principal-missing', policy);
  if (error instanceof MismatchError) return problemFor('key-mismatch', policy);
  if (error instanceof NotReplayableError) return problemFor('response-not-replayable', policy);
  if (error instanceof InFlightError) return problemFor('in-flight', policy, error.retryAfterSeconds);
  if (error instanceof StoreUnavailableError) return problemFor('store-unavailable', policy);
  if (error instanceof LeaseLostError) return problemFor('lease-lost', policy);
  if (error instanceof OutcomeUnknownError) return problemFor('outcome-unknown', policy);
  return undefined;
}

/**
 * The claim of the protected call whose async call chain runs: a cell per call, emptied when its claim ends, so a
 * timer or promise the function left running sees no claim rather than a stale one.
 */
const running = new AsyncLocalStorage<{ context?: IdempotencyContext }>();

/**
 * The running claim, anywhere inside a protected function's async call chain: scope, key, fencing token, attempt,
 * lease signal and (transactional mode) the transaction's `db`. The same shape as every adapter's. Undefined outside
 * a protected call, and once its claim has ended (completed, failed or released).
 */
export function idempotencyOf(): IdempotencyContext | undefined {
  return running.getStore()?.context;
}

/**
 * Wraps a function for tRPC procedures, GraphQL resolvers, queue handlers or scripts: it runs at most once per
 * (scope, key) and every repeat gets its stored JSON result. The result must be JSON-serialisable; the first call
 * returns its JSON form too, so a repeat can never see a different shape. A repeat with other input throws
 * MismatchError, one while the first still runs InFlightError (both from core.ts), a store outage
 * StoreUnavailableError; a thrown `work` releases the key so a retry runs again.
 */
export function idempotent(action: ActionSettings, options: PlainIdempotencyOptions): PlainIdempotent {
  const detailed = async <T>(call: PlainCall, work: (context: IdempotencyContext) => Promise<T>) => {
    const { core } = options;
    const policy = core.policy;
    const principal =
      action.scope === 'global' ? 'global' : (call.scope ?? (await options.principal(action.scope)));
    const scope = principal === undefined ? '' : String(principal);
    // Log-only rollout: a call enforcement would refuse runs anyway, unrecorded (the core counts it).
    const refused = (error: Error) => {
      if (action.rollout !== 'log-only') throw error;
      return refusedRequest(scope);
    };
    const input = { body: call.fingerprintInput };
    const fingerprint = computeFingerprint({
      method: action.method ?? 'POST',
      route: action.route,
      fields:
        action.significantFields.length > 0
          ? pickFields(action.significantFields, input)
          : { input: call.fingerprintInput ?? null },
    });
    let request: IdempotentRequest;
    if (scope === '') request = refused(new PrincipalMissingError());
    else if (action.key.source === 'derived' && call.key === undefined) {
      const values = pickFields(action.key.from ?? action.significantFields, input);
      request = Object.values(values).some((value) => value === null)
        ? refused(new InvalidKeyError('missing'))
        : { scope, key: deriveKey(action.codeName, values), fingerprint };
    } else {
      const parsed = parseIdempotencyKey(call.key, policy.maxKeyLength, policy.keyPattern);
      // `=== false`, not `!parsed.ok`: the union narrows that way even in projects without strictNullChecks.
      request =
        parsed.ok === false
          ? refused(new InvalidKeyError(parsed.problem))
          : { scope, key: parsed.key, fingerprint };
    }
    const cell: { context?: IdempotencyContext } = {};
    try {
      return await core.runOnce(action, request, (_signal, context) => {
        cell.context = context;
        return running.run(cell, async () => {
          // The stored form: nothing is stored as null, so the first call returns what every repeat will.
          const result = await work(context);
          return JSON.parse(JSON.stringify(result ?? null)) as T;
        });
      });
    } finally {
      // runOnce has completed or released the claim: what the function left running keeps the cell, not the claim.
      delete cell.context;
    }
  };
  const run = async <T>(call: PlainCall, work: (context: IdempotencyContext) => Promise<T>) =>
    (await detailed(call, work)).result;
  return Object.assign(run, { detailed });
}

/** By action name, as `createIdempotency()` returns it: `idempotency.idempotent('createPayment', call, work)`. */
export function plainWrappers<N extends string>(
  options: PlainIdempotencyOptions,
  actions: Readonly<Record<N, ActionSettings>>,
) {
  const wrapped = new Map<N, PlainIdempotent>();
  const of = (name: N) => {
    let found = wrapped.get(name);
    if (!found) wrapped.set(name, (found = idempotent(actions[name], options)));
    return found;
  };
  return {
    idempotent: <T>(
      name: N,
      call: PlainCall,
      work: (context: IdempotencyContext) => Promise<T>,
    ): Promise<T> => of(name)(call, work),
  };
}
