import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fingerprintsEqual } from './fingerprint.js';
import {
  LeaseLostError,
  OutcomeUnknownError,
  StoreUnavailableError,
  type ActionSettings,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyContext,
  type IdempotencyEvents,
  type IdempotencyPolicy,
  type IdempotencyStore,
  type LeaseSignal,
  type LogOnlyOutcome,
  type OpenTransaction,
  type StoredResponse,
} from './types.js';

export interface IdempotentRequest {
  /** The principal (or "global") that owns the key: records never cross principals. */
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
  /**
   * Log-only rollout: identification would have refused this request (no usable key or principal). begin() lets it
   * run unrecorded, under a fresh key of its own (see refusedRequest).
   */
  readonly refused?: boolean;
}

/**
 * Log-only rollout: the request an enforcing action would have refused. Its random key is what the handler's
 * context carries, so provider keys derived from it are new each time, as they were before idempotency.
 */
export function refusedRequest(scope: string): IdempotentRequest {
  return {
    scope: scope === '' ? 'anonymous' : scope,
    key: randomBytes(16).toString('hex'),
    fingerprint: '',
    refused: true,
  };
}

export type Decision =
  | { readonly kind: 'execute'; readonly claim: Claim }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'not-replayable' }
  | { readonly kind: 'in-flight'; readonly retryAfterSeconds: number };

/**
 * One ownership of a key while the action runs, whichever mode holds it. complete() resolves only once the
 * response is durable (then it may be sent); it throws LeaseLostError (fenced out), StoreUnavailableError (nothing
 * was recorded and, in transactional mode, everything was rolled back) or OutcomeUnknownError (the action may have
 * taken effect; tell the client to retry later with the same key).
 */
export interface Claim {
  readonly ref: ClaimRef;
  readonly context: IdempotencyContext;
  readonly signal: LeaseSignal;
  complete(response: StoredResponse): Promise<void>;
  /** Gives the key back (transactional mode: rolls back the action's writes too) so a retry runs again. */
  release(): Promise<void>;
}

/** Statuses that describe the caller's situation right now, not the outcome of the action: never stored. */
const TRANSIENT_STATUSES = new Set([401, 403, 408, 425, 429]);

export function isStorable(status: number): boolean {
  return status < 500 && !TRANSIENT_STATUSES.has(status);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * claim → decide → execute → complete/release, independent of any framework. Adapters turn a Decision into a
 * response; the action runs only on 'execute', and only its owner (by fencing token) can record the result.
 */
export class IdempotencyCore {
  constructor(
    readonly store: IdempotencyStore,
    readonly policy: IdempotencyPolicy,
    private readonly events: IdempotencyEvents = {},
  ) {}

  async begin(action: ActionSettings, request: IdempotentRequest): Promise<Decision> {
    this.events.request?.(action.codeName);
    if (action.rollout === 'log-only') return this.beginLogOnly(action, request);
    const deadline = Date.now() + (this.policy.inFlight === 'wait' ? this.policy.inFlightWaitMs : 0);
    const input = this.claimInput(action, request);
    const transactional = action.mode === 'transactional' && this.store.claimInTransaction !== undefined;
    for (;;) {
      if (transactional) {
        const result = await this.guard('claim', () => this.store.claimInTransaction!(input));
        if (result.outcome === 'claimed') {
          this.events.claimed?.(action.codeName, request.scope, result.attempt > 1 ? 'orphan' : 'no');
          return {
            kind: 'execute',
            claim: new TransactionalClaim(this, action, result.transaction, result.attempt, result.startedAt),
          };
        }
        const decision = this.decideExisting(action, request, result.record);
        if (decision.kind !== 'in-flight' || Date.now() >= deadline) return this.settle(action, decision);
      } else {
        const result = await this.guard('claim', () => this.store.claim(input));
        if (result.outcome === 'claimed') {
          this.events.claimed?.(action.codeName, request.scope, result.reclaimed);
          return {
            kind: 'execute',
            claim: new ActiveClaim(this, action, result.ref, result.attempt, result.startedAt),
          };
        }
        const decision = this.decideExisting(action, request, result.record);
        // 'wait' mode: a duplicate of a running request polls briefly for its result instead of failing at once.
        if (decision.kind !== 'in-flight' || Date.now() >= deadline) return this.settle(action, decision);
      }
      await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
    }
  }

  /**
   * Log-only rollout: always 'execute'. A first sighting is claimed in lease mode (never a transaction that our
   * store could roll back under the handler's writes) and completed best effort; anything else runs under a
   * pass-through claim that records nothing, and what enforcement would have answered is only counted.
   */
  private async beginLogOnly(action: ActionSettings, request: IdempotentRequest): Promise<Decision> {
    if (request.refused) return this.passThrough(action, request, 'refuse');
    let result: ClaimResult;
    try {
      result = await this.guard('claim', () => this.store.claim(this.claimInput(action, request)));
    } catch {
      // Counted as a store error by guard; the request runs as it would without idempotency.
      return this.passThrough(action, request, 'store-unavailable');
    }
    if (result.outcome === 'claimed') {
      this.events.claimed?.(action.codeName, request.scope, result.reclaimed);
      return {
        kind: 'execute',
        claim: new ActiveClaim(this, action, result.ref, result.attempt, result.startedAt, true),
      };
    }
    const would = this.judge(request, result.record).kind;
    // A key reused for other parameters runs under a fresh key of its own: provider keys derived from the recorded
    // one would make the provider refuse the different request, which enforcement has not started doing yet.
    return this.passThrough(action, would === 'mismatch' ? refusedRequest(request.scope) : request, would);
  }

  private claimInput(action: ActionSettings, request: IdempotentRequest) {
    return {
      scope: request.scope,
      key: request.key,
      action: action.codeName,
      fingerprint: request.fingerprint,
      algorithm: this.policy.fingerprintAlgorithm,
      leaseMs: action.leaseMs,
      retentionMs: this.policy.retentionMs,
    };
  }

  private passThrough(action: ActionSettings, request: IdempotentRequest, would: LogOnlyOutcome): Decision {
    this.events.logOnly?.(action.codeName, would);
    return { kind: 'execute', claim: new PassThroughClaim(action, request) };
  }

  private settle(action: ActionSettings, decision: Decision): Decision {
    if (decision.kind === 'in-flight') this.events.inFlight?.(action.codeName);
    return decision;
  }

  private decideExisting(
    action: ActionSettings,
    request: IdempotentRequest,
    record: ExistingRecord,
  ): Decision {
    const decision = this.judge(request, record);
    if (decision.kind === 'mismatch') this.events.mismatch?.(action.codeName);
    if (decision.kind === 'not-replayable' || decision.kind === 'replay')
      this.events.replayed?.(action.codeName);
    return decision;
  }

  /** What an existing record means for this request; no events, so log-only mode can ask without counting. */
  private judge(request: IdempotentRequest, record: ExistingRecord): Exclude<Decision, { kind: 'execute' }> {
    // An unknown algorithm cannot be compared, so it counts as a mismatch: never replay a possibly different intent.
    if (
      record.algorithm !== this.policy.fingerprintAlgorithm ||
      !fingerprintsEqual(record.fingerprint, request.fingerprint)
    )
      return { kind: 'mismatch' };
    if (record.status !== 'PROCESSING' && record.notReplayable) return { kind: 'not-replayable' };
    if (record.status !== 'PROCESSING' && record.response)
      return { kind: 'replay', response: record.response };
    const seconds = record.leaseLive
      ? Math.ceil(record.leaseRemainingMs / 1000)
      : this.policy.retryAfterSeconds;
    return {
      kind: 'in-flight',
      retryAfterSeconds: Math.max(1, Math.min(seconds, this.policy.retryAfterSeconds)),
    };
  }

  /**
   * For consumers and jobs: runs `work` at most once per key and returns its (JSON) result, replaying the stored
   * result for duplicates. Throws InFlightError / MismatchError so the caller can nack or skip. `work` receives
   * the same context as an HTTP handler (transactional mode: write through `context.db`).
   */
  async runOnce<T>(
    action: ActionSettings,
    request: IdempotentRequest,
    work: (signal: LeaseSignal, context: IdempotencyContext) => Promise<T>,
  ): Promise<{ result: T; replayed: boolean }> {
    const decision = await this.begin(action, request);
    if (decision.kind === 'replay')
      return { result: JSON.parse(decision.response.body.toString('utf8')) as T, replayed: true };
    if (decision.kind === 'mismatch') throw new MismatchError();
    if (decision.kind === 'not-replayable') throw new NotReplayableError();
    if (decision.kind === 'in-flight') throw new InFlightError(decision.retryAfterSeconds);
    const { claim } = decision;
    let result: T;
    try {
      result = await work(claim.signal, claim.context);
    } catch (error) {
      await claim.release();
      throw error;
    }
    const body = Buffer.from(JSON.stringify(result ?? null), 'utf8');
    await claim.complete({ status: 200, headers: { 'content-type': 'application/json' }, body });
    return { result, replayed: false };
  }

  /** Every store call goes through here so failures are counted and always surface as StoreUnavailableError. */
  async guard<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof LeaseLostError || error instanceof OutcomeUnknownError) {
        if (error instanceof OutcomeUnknownError) this.events.storeError?.(operation);
        throw error;
      }
      this.events.storeError?.(operation);
      throw error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError(operation, { cause: error });
    }
  }

  /** Above the cap only the status and the body's SHA-256 are recorded; the first caller still gets the body. */
  storable(action: ActionSettings, response: StoredResponse): StoredResponse {
    if (response.body.length <= this.policy.maxStoredResponseBytes) return response;
    this.events.responseNotStored?.(action.codeName, response.body.length);
    const bodySha256 = createHash('sha256').update(response.body).digest('hex');
    return { status: response.status, headers: {}, body: Buffer.alloc(0), bodySha256 };
  }

  /** @internal used by the claims */
  report(
    action: string,
    outcome: 'completed' | 'failed' | 'released' | 'lease-lost' | 'outcome-unknown',
    durationMs: number,
  ): void {
    this.events.finished?.(action, outcome, durationMs);
  }
}

export class MismatchError extends Error {
  constructor() {
    super('idempotency key reused with a different request');
    this.name = 'MismatchError';
  }
}

export class NotReplayableError extends Error {
  constructor() {
    super('this key already completed, but its result was too large to keep');
    this.name = 'NotReplayableError';
  }
}

export class InFlightError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('a request with this idempotency key is still being processed');
    this.name = 'InFlightError';
  }
}

function contextOf(
  ref: ClaimRef,
  attempt: number,
  startedAt: number,
  signal: LeaseSignal,
  db?: unknown,
  logOnly?: 'claimed' | 'pass-through',
): IdempotencyContext {
  const context = {
    scope: ref.scope,
    key: ref.key,
    token: ref.token,
    action: ref.action,
    attempt,
    startedAt,
    signal,
    db,
  };
  return Object.assign(context, logOnly ? { logOnly } : {}, { ref: context });
}

/**
 * Lease mode: the claim is committed and held by a lease and a fencing token while the action runs; renews the
 * lease if configured, then completes or releases.
 */
export class ActiveClaim implements Claim {
  private readonly controller = new AbortController();
  private readonly began = performance.now();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private settled = false;
  readonly context: IdempotencyContext;
  /** Aborted when the lease is lost: long actions should stop and leave the key to its new owner. */
  readonly signal = this.controller.signal;

  constructor(
    private readonly core: IdempotencyCore,
    private readonly action: ActionSettings,
    readonly ref: ClaimRef,
    attempt: number,
    startedAt: number,
    /** Log-only rollout: one completion attempt, and a failure to record is counted, never thrown. */
    private readonly logOnly = false,
  ) {
    this.context = contextOf(
      ref,
      attempt,
      startedAt,
      this.controller.signal,
      undefined,
      logOnly ? 'claimed' : undefined,
    );
    if (action.heartbeatMs) {
      this.heartbeat = setInterval(() => void this.renew(), action.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /**
   * Records the response; resolves only once it is durable, so it may be sent afterwards. A failed write is
   * retried with the same fencing token (the write is idempotent for its owner) for up to completionRetryMs;
   * then OutcomeUnknownError: the action ran, and saying "not processed" would invite a second execution.
   */
  async complete(response: StoredResponse): Promise<void> {
    this.stop();
    const status = response.status < 400 ? 'COMPLETED' : 'FAILED';
    const record = this.core.storable(this.action, response);
    const deadline = Date.now() + this.core.policy.completionRetryMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
      let stored: boolean;
      try {
        stored = await this.core.guard('complete', () =>
          this.core.store.complete(this.ref, status, record, this.core.policy.retentionMs),
        );
      } catch (error) {
        // Log-only: guard counted the store error; the handler's answer goes out unrecorded.
        if (this.logOnly) return;
        if (!(error instanceof StoreUnavailableError) || Date.now() + delay >= deadline) {
          this.core.report(this.action.codeName, 'outcome-unknown', this.elapsed());
          throw new OutcomeUnknownError({ cause: error });
        }
        await sleep(delay);
        continue;
      }
      if (!stored) {
        this.core.report(this.action.codeName, 'lease-lost', this.elapsed());
        if (this.logOnly) return;
        throw new LeaseLostError();
      }
      this.core.report(this.action.codeName, status === 'COMPLETED' ? 'completed' : 'failed', this.elapsed());
      return;
    }
  }

  /** Gives the key back so a retry runs the action again. Best effort: if the store is down the lease lapses instead. */
  async release(): Promise<void> {
    this.stop();
    this.core.report(this.action.codeName, 'released', this.elapsed());
    await this.core.guard('release', () => this.core.store.release(this.ref)).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    if (this.settled) return;
    const still = await this.core
      .guard('extend', () => this.core.store.extend(this.ref, this.action.leaseMs))
      .catch(() => true);
    // A failed renewal (store hiccup) is not a loss: the lease may still be valid. Only a fenced-out token is.
    if (!still && !this.settled) {
      this.stop();
      // The reason reaches the handler's signal.reason; typings before @types/node 16.14 declare abort() without one.
      (this.controller as { abort(reason?: unknown): void }).abort(new LeaseLostError());
    }
  }

  private stop(): void {
    this.settled = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  private elapsed(): number {
    return performance.now() - this.began;
  }
}

/**
 * Transactional mode: the claim row, the action's own writes (through `context.db`) and the completion share one
 * open transaction. Nothing is visible to others until it commits; a crash, a thrown handler or a failed
 * completion rolls all of it back, so a retry starts from a clean slate.
 */
export class TransactionalClaim implements Claim {
  private readonly controller = new AbortController();
  private readonly began = performance.now();
  private finished = false;
  readonly context: IdempotencyContext;
  readonly ref: ClaimRef;
  readonly signal = this.controller.signal;

  constructor(
    private readonly core: IdempotencyCore,
    private readonly action: ActionSettings,
    private readonly transaction: OpenTransaction,
    attempt: number,
    startedAt: number,
  ) {
    this.ref = transaction.ref;
    this.context = contextOf(transaction.ref, attempt, startedAt, this.controller.signal, transaction.db);
  }

  async complete(response: StoredResponse): Promise<void> {
    if (this.finished) throw new Error('idempotency claim already finished');
    this.finished = true;
    const status = response.status < 400 ? 'COMPLETED' : 'FAILED';
    const record = this.core.storable(this.action, response);
    try {
      await this.core.guard('complete', () =>
        this.transaction.commit(status, record, this.core.policy.retentionMs),
      );
    } catch (error) {
      this.core.report(
        this.action.codeName,
        error instanceof OutcomeUnknownError ? 'outcome-unknown' : 'released',
        this.elapsed(),
      );
      throw error;
    }
    this.core.report(this.action.codeName, status === 'COMPLETED' ? 'completed' : 'failed', this.elapsed());
  }

  async release(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.core.report(this.action.codeName, 'released', this.elapsed());
    await this.transaction.rollback().catch(() => undefined);
  }

  private elapsed(): number {
    return performance.now() - this.began;
  }
}

/**
 * Log-only rollout: the claim of a request enforcement would have answered without running it (a duplicate, a
 * refusal, a store outage). Nothing is recorded or released, and its context has no `db` (write through your own
 * pool: `context.db ?? pool`).
 */
export class PassThroughClaim implements Claim {
  readonly ref: ClaimRef;
  readonly context: IdempotencyContext;
  readonly signal: LeaseSignal;

  constructor(action: ActionSettings, request: IdempotentRequest) {
    this.ref = { scope: request.scope, key: request.key, token: '', action: action.codeName };
    this.signal = new AbortController().signal;
    this.context = contextOf(this.ref, 1, Date.now(), this.signal, undefined, 'pass-through');
  }

  complete(): Promise<void> {
    return Promise.resolve();
  }

  release(): Promise<void> {
    return Promise.resolve();
  }
}
