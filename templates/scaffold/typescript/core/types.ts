/** Shapes shared by the framework-agnostic core, the stores and the framework adapters. */

export type Scope = 'user' | 'account' | 'tenant' | 'global';
export type Trigger = 'http' | 'webhook' | 'consumer' | 'cron';

/** One protected action, with every decision from the design document baked in. */
export interface ActionSettings {
  readonly name: string;
  readonly codeName: string;
  readonly trigger: Trigger;
  /** HTTP method and route template; the route template (not the concrete URL) goes into the fingerprint. */
  readonly method?: string;
  readonly route: string;
  readonly significantFields: readonly string[];
  readonly scope: Scope;
  /**
   * 'transactional': the action's effects live in the store's database; the claim, the handler's writes (through
   * the context's `db`) and the completion commit in one transaction, so any failure rolls all of it back.
   * 'lease': the action has effects elsewhere (payments, e-mail, other services); the claim commits first and is
   * held by a lease and a fencing token while the action runs.
   */
  readonly mode: 'transactional' | 'lease';
  /**
   * 'log-only' while rolling out: every request runs its handler. A first sighting of a key is still claimed and
   * recorded (in lease mode, whatever `mode` says, and a store failure is only counted), so switching to 'enforce'
   * later replays real answers; what would have been replayed or refused is counted (IdempotencyEvents.logOnly),
   * never answered. Absent means 'enforce'.
   */
  readonly rollout?: 'enforce' | 'log-only';
  /**
   * 'derived' keys are computed from request fields; the others arrive in the key header. A server-rendered form
   * cannot set a header: `field` names the hidden form field its key may arrive in instead (minted per render with
   * newIdempotencyKey()), read only when the request has no key header.
   */
  readonly key: {
    readonly source: 'client' | 'server' | 'derived';
    readonly from?: readonly string[];
    readonly field?: string;
  };
  readonly leaseMs: number;
  /** Present when the action may outlive a comfortable lease: the owner renews the lease this often. */
  readonly heartbeatMs?: number;
  readonly steps: readonly {
    readonly index: number;
    readonly name: string;
    readonly compensation?: string;
  }[];
}

/** Decisions that apply to every action. */
export interface IdempotencyPolicy {
  readonly keyHeader: string;
  readonly maxKeyLength: number;
  /** The key grammar (regular expression source) the design document states: printable ASCII, no comma or space. */
  readonly keyPattern: string;
  readonly mismatchStatus: 409 | 422;
  readonly inFlight: 'reject' | 'wait';
  readonly inFlightWaitMs: number;
  readonly retryAfterSeconds: number;
  readonly replayHeader: string;
  /** Only these response headers are stored and replayed; cookies and per-request headers never are. */
  readonly replayedHeaders: readonly string[];
  readonly problemTypeBase: string;
  readonly retentionMs: number;
  /** Longest wait for a pooled connection; failing here is provably "not processed" (nothing was sent). */
  readonly acquireTimeoutMs: number;
  /** Server-side statement_timeout (SET LOCAL) for each store statement on the request path. */
  readonly statementTimeoutMs: number;
  /** Server-side lock_timeout: how long a claim waits on a concurrent duplicate's uncommitted row. */
  readonly lockTimeoutMs: number;
  /** acquireTimeoutMs + statementTimeoutMs: the most a request waits for the store before 503. */
  readonly storeTimeoutMs: number;
  /** Lease mode: how long a failed completion is retried (same fencing token) before the outcome is reported unknown. */
  readonly completionRetryMs: number;
  /** Bodies above this many bytes are not stored: status and SHA-256 are, and a replay answers response-not-replayable. */
  readonly maxStoredResponseBytes: number;
  readonly fingerprintAlgorithm: string;
  readonly table: string;
  readonly stepTable: string;
  readonly cleanupBatchSize: number;
  /** Connections in the store's pool (createPool), sized from the expected concurrency; default 10. */
  readonly poolSize?: number;
}

export type RecordStatus = 'PROCESSING' | 'COMPLETED' | 'FAILED';

export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Exact bytes, so a replay is byte-identical to the first answer. */
  readonly body: Buffer;
  /** Set instead of a body when the body was above maxStoredResponseBytes: the record keeps only its hash. */
  readonly bodySha256?: string;
}

export interface ClaimInput {
  readonly scope: string;
  readonly key: string;
  readonly action: string;
  readonly fingerprint: string;
  readonly algorithm: string;
  readonly leaseMs: number;
  readonly retentionMs: number;
}

/** Identifies one ownership of a record; the fencing token changes on every (re)claim. */
export interface ClaimRef {
  readonly scope: string;
  readonly key: string;
  readonly token: string;
  /** The action's codeName: part of every derived provider key. */
  readonly action: string;
}

/**
 * The platform's AbortSignal. Typings before @types/node 16 declare none: there, the part of it a handler reads.
 */
export type LeaseSignal =
  typeof globalThis extends Record<'AbortSignal', { prototype: infer S }>
    ? S
    : {
        readonly aborted: boolean;
        readonly reason?: unknown;
        addEventListener(type: 'abort', listener: () => void): void;
        removeEventListener(type: 'abort', listener: () => void): void;
      };

/**
 * What a handler sees while its claim runs, the same shape in every adapter (`idempotencyOf(request)`): pass it to
 * `saga.run(context, steps)` and to the provider key helpers (`stripeRequestOptions(context)`).
 */
export interface IdempotencyContext extends ClaimRef {
  /** 1 on the first attempt; higher when an earlier attempt lapsed and this one took over (an effect may exist). */
  readonly attempt: number;
  /**
   * When the record was created (epoch ms, store's clock): the same on every attempt of this key, new only when an
   * expired key starts over. Derive business times sent to a provider from it (`expires_at`, `expiresAt`), never
   * from the clock, so a retry sends the same parameters under the same provider key.
   */
  readonly startedAt: number;
  /** Aborted when the lease is lost: stop and leave the key to its new owner. */
  readonly signal: LeaseSignal;
  /** The same object as this context, for code written against the older `{ ref }` shape. */
  readonly ref: ClaimRef;
  /** Transactional mode: the open transaction's client (pg PoolClient); write through it. Undefined in lease mode. */
  readonly db?: unknown;
  /**
   * Only for an action in log-only rollout: 'claimed' for a key's first sighting (its record and saga steps are
   * written best effort), 'pass-through' for a run that holds no claim (a duplicate, a refusal, a store outage) and
   * records nothing.
   */
  readonly logOnly?: 'claimed' | 'pass-through';
}

export interface ExistingRecord {
  readonly status: RecordStatus;
  readonly fingerprint: string;
  readonly algorithm: string;
  readonly leaseLive: boolean;
  readonly leaseRemainingMs: number;
  readonly response?: StoredResponse;
  /** Finished, but the body was above maxStoredResponseBytes: only its status and hash were kept. */
  readonly notReplayable?: boolean;
}

export type ClaimResult =
  | {
      readonly outcome: 'claimed';
      readonly ref: ClaimRef;
      readonly reclaimed: 'no' | 'orphan' | 'released' | 'expired';
      readonly attempt: number;
      /** The record's creation time (epoch ms, store's clock); see IdempotencyStore for what it must be. */
      readonly startedAt: number;
    }
  | { readonly outcome: 'existing'; readonly record: ExistingRecord };

/**
 * What a store must guarantee: claim is one atomic step (insert, or take over an expired record, or reclaim a
 * lapsed lease for the same fingerprint with a new fencing token), and every later write is conditional on the token.
 *
 * A claim also returns `startedAt`, the record's creation time in epoch ms on the store's own clock, read or written
 * by that same atomic step (no extra call): a new record's creation time; on a takeover or reclaim of a lapsed or
 * released lease, the value the record already holds, unchanged; on an expired record claimed as new, the time of
 * this claim. Handlers derive provider parameters from it, so it must never move between attempts of one record.
 */
export interface IdempotencyStore {
  claim(input: ClaimInput): Promise<ClaimResult>;
  /** False when the token no longer owns the record (another worker reclaimed it): the write was rejected. */
  complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean>;
  release(ref: ClaimRef): Promise<boolean>;
  extend(ref: ClaimRef, leaseMs: number): Promise<boolean>;
  read(scope: string, key: string): Promise<ExistingRecord | undefined>;
  /**
   * Transactional mode: claims inside a transaction that stays open; the caller writes through `db`, then
   * `commit(response)` records the response and commits everything, or `rollback()` undoes everything.
   */
  claimInTransaction?(input: ClaimInput): Promise<TransactionClaimResult>;
  /**
   * For the reconciliation job: records still PROCESSING whose lease lapsed at least `minStuckMs` ago and that
   * were not given back (released), oldest lease first. Optional: a store without it gets no reconciliation.
   */
  listStuck?(options: { readonly limit: number; readonly minStuckMs?: number }): Promise<StuckRecord[]>;
}

/** A claim whose owner stopped renewing it without finishing: crashed, or its completion could not be recorded. */
export interface StuckRecord {
  readonly scope: string;
  readonly key: string;
  readonly action: string;
  readonly fingerprint: string;
  readonly algorithm: string;
  readonly attempts: number;
  /** How long ago the lease lapsed, by the store's clock. */
  readonly stuckForMs: number;
}

export type TransactionClaimResult =
  | {
      readonly outcome: 'claimed';
      readonly transaction: OpenTransaction;
      readonly attempt: number;
      /** As for claim(): the record's creation time, stable across attempts. */
      readonly startedAt: number;
    }
  | { readonly outcome: 'existing'; readonly record: ExistingRecord };

export interface OpenTransaction {
  readonly ref: ClaimRef;
  readonly db: unknown;
  /** Records the response and commits; throws StoreUnavailableError (rolled back) or OutcomeUnknownError. */
  commit(status: 'COMPLETED' | 'FAILED', response: StoredResponse, retentionMs: number): Promise<void>;
  rollback(): Promise<void>;
}

/**
 * Error's `cause` option is ES2022 (lib and runtime): set by hand, so the same code compiles for older targets and
 * still carries the underlying error for logs.
 */
export function setCause(error: Error, options?: { cause?: unknown }): void {
  if (options && 'cause' in options) {
    Object.defineProperty(error, 'cause', { value: options.cause, writable: true, configurable: true });
  }
}

/** The store did not answer in time or failed: callers fail closed (503) rather than run unprotected. */
export class StoreUnavailableError extends Error {
  constructor(
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`idempotency store unavailable during ${operation}`);
    setCause(this, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The action ran but its result could not be recorded (lease mode: completion retries ran out; transactional mode:
 * the COMMIT's answer was lost). Never answer "not processed": the client must retry later with the same key.
 */
export class OutcomeUnknownError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the action ran but its outcome could not be recorded');
    setCause(this, options);
    this.name = 'OutcomeUnknownError';
  }
}

/** This worker's claim was taken over after its lease lapsed; its result must not be stored or sent as final. */
export class LeaseLostError extends Error {
  constructor() {
    super('idempotency claim lost: another worker reclaimed the key');
    this.name = 'LeaseLostError';
  }
}

/** Hooks the metrics module implements; the core never depends on a metrics library. */
export interface IdempotencyEvents {
  request?(action: string): void;
  claimed?(action: string, principal: string, reclaimed: 'no' | 'orphan' | 'released' | 'expired'): void;
  replayed?(action: string): void;
  inFlight?(action: string): void;
  mismatch?(action: string): void;
  finished?(
    action: string,
    outcome: 'completed' | 'failed' | 'released' | 'lease-lost' | 'outcome-unknown',
    durationMs: number,
  ): void;
  storeError?(operation: string): void;
  /** A stored response was above the size cap: status and hash kept, body dropped. */
  responseNotStored?(action: string, bytes: number): void;
  /** Log-only rollout: the request ran, but enforcement would have answered it this way instead. */
  logOnly?(action: string, would: LogOnlyOutcome): void;
}

/** What an enforcing action would have done with a request that log-only mode let through. */
export type LogOnlyOutcome =
  'replay' | 'mismatch' | 'in-flight' | 'not-replayable' | 'refuse' | 'store-unavailable';

/**
 * How a saga records its steps under a claim: as usual; in log-only rollout (the context's `logOnly`) not at all
 * without a claim of its own, and best effort with one (a failed step write is not the request's failure).
 */
export function stepKeeper(claim: ClaimRef): <T>(call: () => Promise<T>, fallback: T) => Promise<T> {
  const logOnly = (claim as { logOnly?: 'claimed' | 'pass-through' }).logOnly;
  return (call, fallback) =>
    logOnly === 'pass-through'
      ? Promise.resolve(fallback)
      : logOnly === 'claimed'
        ? call().catch(() => fallback)
        : call();
}
