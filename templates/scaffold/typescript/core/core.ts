import { fingerprintsEqual } from './fingerprint.js';
import {
  LeaseLostError,
  StoreUnavailableError,
  type ActionSettings,
  type ClaimRef,
  type ExistingRecord,
  type IdempotencyEvents,
  type IdempotencyPolicy,
  type IdempotencyStore,
  type StoredResponse,
} from './types.js';

export interface IdempotentRequest {
  /** The principal (or "global") that owns the key: records never cross principals. */
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
}

export type Decision =
  | { readonly kind: 'execute'; readonly claim: ActiveClaim }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in-flight'; readonly retryAfterSeconds: number };

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
    const deadline = Date.now() + (this.policy.inFlight === 'wait' ? this.policy.inFlightWaitMs : 0);
    for (;;) {
      const result = await this.guard('claim', () =>
        this.store.claim({
          scope: request.scope,
          key: request.key,
          action: action.codeName,
          fingerprint: request.fingerprint,
          algorithm: this.policy.fingerprintAlgorithm,
          leaseMs: action.leaseMs,
          retentionMs: this.policy.retentionMs,
        }),
      );
      if (result.outcome === 'claimed') {
        this.events.claimed?.(action.codeName, request.scope, result.reclaimed);
        return { kind: 'execute', claim: new ActiveClaim(this, action, result.ref) };
      }
      const decision = this.decideExisting(action, request, result.record);
      // 'wait' mode: a duplicate of a running request polls briefly for its result instead of failing at once.
      if (decision.kind !== 'in-flight' || Date.now() >= deadline) {
        if (decision.kind === 'in-flight') this.events.inFlight?.(action.codeName);
        return decision;
      }
      await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
    }
  }

  private decideExisting(
    action: ActionSettings,
    request: IdempotentRequest,
    record: ExistingRecord,
  ): Decision {
    // An unknown algorithm cannot be compared, so it counts as a mismatch: never replay a possibly different intent.
    if (
      record.algorithm !== this.policy.fingerprintAlgorithm ||
      !fingerprintsEqual(record.fingerprint, request.fingerprint)
    ) {
      this.events.mismatch?.(action.codeName);
      return { kind: 'mismatch' };
    }
    if (record.status !== 'PROCESSING' && record.response) {
      this.events.replayed?.(action.codeName);
      return { kind: 'replay', response: record.response };
    }
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
   * result for duplicates. Throws InFlightError / MismatchError so the caller can nack or skip.
   */
  async runOnce<T>(
    action: ActionSettings,
    request: IdempotentRequest,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ result: T; replayed: boolean }> {
    const decision = await this.begin(action, request);
    if (decision.kind === 'replay')
      return { result: JSON.parse(decision.response.body.toString('utf8')) as T, replayed: true };
    if (decision.kind === 'mismatch') throw new MismatchError();
    if (decision.kind === 'in-flight') throw new InFlightError(decision.retryAfterSeconds);
    const { claim } = decision;
    let result: T;
    try {
      result = await work(claim.signal);
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
      if (error instanceof LeaseLostError) throw error;
      this.events.storeError?.(operation);
      throw error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError(operation, { cause: error });
    }
  }

  /** @internal used by ActiveClaim */
  report(
    action: string,
    outcome: 'completed' | 'failed' | 'released' | 'lease-lost',
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

export class InFlightError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('a request with this idempotency key is still being processed');
    this.name = 'InFlightError';
  }
}

/** Ownership of one key while the action runs: renews the lease if configured, then completes or releases. */
export class ActiveClaim {
  private readonly controller = new AbortController();
  private readonly startedAt = performance.now();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private settled = false;

  constructor(
    private readonly core: IdempotencyCore,
    private readonly action: ActionSettings,
    readonly ref: ClaimRef,
  ) {
    if (action.heartbeatMs) {
      this.heartbeat = setInterval(() => void this.renew(), action.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /** Aborted when the lease is lost: long actions should stop and leave the key to its new owner. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Records the response; resolves only once it is durable, so it may be sent afterwards. */
  async complete(response: StoredResponse): Promise<void> {
    this.stop();
    const status = response.status < 400 ? 'COMPLETED' : 'FAILED';
    const stored = await this.core.guard('complete', () =>
      this.core.store.complete(this.ref, status, response, this.core.policy.retentionMs),
    );
    if (!stored) {
      this.core.report(this.action.codeName, 'lease-lost', this.elapsed());
      throw new LeaseLostError();
    }
    this.core.report(this.action.codeName, status === 'COMPLETED' ? 'completed' : 'failed', this.elapsed());
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
      this.controller.abort(new LeaseLostError());
    }
  }

  private stop(): void {
    this.settled = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  private elapsed(): number {
    return performance.now() - this.startedAt;
  }
}
