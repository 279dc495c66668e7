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
  /** 'derived' keys are computed from request fields; the others arrive in the key header. */
  readonly key: { readonly source: 'client' | 'server' | 'derived'; readonly from?: readonly string[] };
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
  readonly mismatchStatus: 409 | 422;
  readonly inFlight: 'reject' | 'wait';
  readonly inFlightWaitMs: number;
  readonly retryAfterSeconds: number;
  readonly replayHeader: string;
  /** Only these response headers are stored and replayed; cookies and per-request headers never are. */
  readonly replayedHeaders: readonly string[];
  readonly problemTypeBase: string;
  readonly retentionMs: number;
  readonly storeTimeoutMs: number;
  readonly fingerprintAlgorithm: string;
  readonly table: string;
  readonly stepTable: string;
  readonly cleanupBatchSize: number;
}

export type RecordStatus = 'PROCESSING' | 'COMPLETED' | 'FAILED';

export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Exact bytes, so a replay is byte-identical to the first answer. */
  readonly body: Buffer;
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
}

export interface ExistingRecord {
  readonly status: RecordStatus;
  readonly fingerprint: string;
  readonly algorithm: string;
  readonly leaseLive: boolean;
  readonly leaseRemainingMs: number;
  readonly response?: StoredResponse;
}

export type ClaimResult =
  | {
      readonly outcome: 'claimed';
      readonly ref: ClaimRef;
      readonly reclaimed: 'no' | 'orphan' | 'released' | 'expired';
    }
  | { readonly outcome: 'existing'; readonly record: ExistingRecord };

/**
 * What a store must guarantee: claim is one atomic step (insert, or take over an expired record, or reclaim a
 * lapsed lease for the same fingerprint with a new fencing token), and every later write is conditional on the token.
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
}

/** The store did not answer in time or failed: callers fail closed (503) rather than run unprotected. */
export class StoreUnavailableError extends Error {
  constructor(
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`idempotency store unavailable during ${operation}`, options);
    this.name = 'StoreUnavailableError';
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
    outcome: 'completed' | 'failed' | 'released' | 'lease-lost',
    durationMs: number,
  ): void;
  storeError?(operation: string): void;
}
