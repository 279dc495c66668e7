import { newFencingToken } from './keys.js';
import {
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyStore,
  type RecordStatus,
  type StoredResponse,
  type StuckRecord,
} from './types.js';

interface MemoryRecord {
  action: string;
  status: RecordStatus;
  readonly fingerprint: string;
  readonly algorithm: string;
  token: string;
  attempts: number;
  /** startedAt: kept by every takeover of this record, new only when an expired key starts over. */
  readonly createdAt: number;
  /** When the lease lapses (epoch ms); 0 once the claim was released or finished. */
  lockedUntil: number;
  released: boolean;
  /** Never before lockedUntil, so a live lease keeps its record whatever the retention. */
  expiresAt: number;
  response?: StoredResponse;
}

/** How often, at most, a claim also walks every record to drop the expired ones nobody asks for again. */
const SWEEP_INTERVAL_MS = 10_000;

/**
 * An IdempotencyStore held in this process's memory, for the app's own tests and local runs: pass
 * `store: createMemoryStore()` to createIdempotency(). It gives the store contract for ONE process only: its
 * records are lost on restart and invisible to other instances, so it must never protect production traffic.
 *
 * Every operation runs synchronously up to its answer, so a claim is atomic against every other request of the
 * process. Times come from `Date.now()` (fake timers move it too). Expired records are dropped when they are next
 * looked up, and every few seconds by the next claim, so memory stays bounded by the records still retained; no
 * timer is left running. It has no claimInTransaction: every action runs in lease mode, and a transactional
 * handler gets no `db`. The saga tracker still keeps its steps through `pool`. `close()` drops every record;
 * calls after it fail closed with StoreUnavailableError.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, MemoryRecord>();
  private closed = false;
  private nextSweepAt = 0;

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const now = this.open('claim');
    if (now >= this.nextSweepAt) {
      this.nextSweepAt = now + SWEEP_INTERVAL_MS;
      this.deleteExpired();
    }
    const id = recordId(input.scope, input.key);
    const found = this.records.get(id);
    const expired = found !== undefined && found.expiresAt <= now;
    if (found && !expired) {
      const lapsed = found.status === 'PROCESSING' && (found.released || found.lockedUntil <= now);
      // A lapsed claim is taken over only by the same request: a different body is another intent.
      if (!lapsed || found.fingerprint !== input.fingerprint || found.algorithm !== input.algorithm) {
        return { outcome: 'existing', record: toExisting(found, now) };
      }
      const reclaimed = found.released ? 'released' : 'orphan';
      found.token = newFencingToken();
      found.action = input.action;
      found.attempts += 1;
      found.released = false;
      found.lockedUntil = now + Math.max(1, input.leaseMs);
      found.expiresAt = Math.max(found.expiresAt, found.lockedUntil);
      return {
        outcome: 'claimed',
        ref: refOf(input, found.token),
        reclaimed,
        attempt: found.attempts,
        startedAt: found.createdAt,
      };
    }
    const lockedUntil = now + Math.max(1, input.leaseMs);
    const record: MemoryRecord = {
      action: input.action,
      status: 'PROCESSING',
      fingerprint: input.fingerprint,
      algorithm: input.algorithm,
      token: newFencingToken(),
      attempts: 1,
      createdAt: now,
      lockedUntil,
      released: false,
      expiresAt: Math.max(lockedUntil, now + input.retentionMs),
    };
    this.records.set(id, record);
    return {
      outcome: 'claimed',
      ref: refOf(input, record.token),
      reclaimed: expired ? 'expired' : 'no',
      attempt: 1,
      startedAt: now,
    };
  }

  /** Completing again with the same token is allowed, so a completion whose answer was lost can be retried. */
  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const now = this.open('complete');
    const record = this.owned(ref, now);
    if (!record) return false;
    record.status = status;
    record.response = copyResponse(response);
    record.lockedUntil = 0;
    record.released = false;
    record.expiresAt = now + retentionMs;
    return true;
  }

  async release(ref: ClaimRef): Promise<boolean> {
    const now = this.open('release');
    const record = this.owned(ref, now);
    if (!record || record.status !== 'PROCESSING') return false;
    record.released = true;
    record.lockedUntil = 0;
    return true;
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    const now = this.open('extend');
    const record = this.owned(ref, now);
    if (!record || record.status !== 'PROCESSING' || record.released) return false;
    record.lockedUntil = now + Math.max(1, leaseMs);
    record.expiresAt = Math.max(record.expiresAt, record.lockedUntil);
    return true;
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const now = this.open('read');
    const record = this.live(recordId(scope, key), now);
    return record && toExisting(record, now);
  }

  /** Claims whose owner stopped renewing them without finishing or giving them back, oldest lease first. */
  async listStuck(options: { readonly limit: number; readonly minStuckMs?: number }): Promise<StuckRecord[]> {
    const now = this.open('listStuck');
    const before = now - Math.max(0, options.minStuckMs ?? 0);
    const stuck: Array<{ id: string; record: MemoryRecord }> = [];
    this.records.forEach((record, id) => {
      if (
        record.status === 'PROCESSING' &&
        !record.released &&
        record.expiresAt > now &&
        record.lockedUntil <= before
      ) {
        stuck.push({ id, record });
      }
    });
    stuck.sort((a, b) => a.record.lockedUntil - b.record.lockedUntil);
    return stuck.slice(0, Math.max(1, Math.floor(options.limit))).map(({ id, record }) => {
      const [scope, key] = JSON.parse(id) as [string, string];
      return {
        scope,
        key,
        action: record.action,
        fingerprint: record.fingerprint,
        algorithm: record.algorithm,
        attempts: record.attempts,
        stuckForMs: now - record.lockedUntil,
      };
    });
  }

  /** Drops every expired record now, returning how many (claims also do it every few seconds). */
  deleteExpired(): number {
    const now = Date.now();
    let deleted = 0;
    this.records.forEach((record, id) => {
      if (record.expiresAt <= now) {
        this.records.delete(id);
        deleted += 1;
      }
    });
    return deleted;
  }

  /** Forgets every record; calls after it fail closed, as a store that went away does. */
  close(): void {
    this.closed = true;
    this.records.clear();
  }

  /** The clock for one operation, or StoreUnavailableError once the store was closed. */
  private open(operation: string): number {
    if (this.closed) throw new StoreUnavailableError(operation);
    return Date.now();
  }

  private live(id: string, now: number): MemoryRecord | undefined {
    const record = this.records.get(id);
    if (record && record.expiresAt <= now) {
      this.records.delete(id);
      return undefined;
    }
    return record;
  }

  /** The record while `ref` still owns it: a takeover gave it a new token, which fences this one out. */
  private owned(ref: ClaimRef, now: number): MemoryRecord | undefined {
    const record = this.live(recordId(ref.scope, ref.key), now);
    return record && record.token === ref.token ? record : undefined;
  }
}

/** A store for one process's tests and local runs (see MemoryIdempotencyStore); never for several instances. */
export function createMemoryStore(): MemoryIdempotencyStore {
  return new MemoryIdempotencyStore();
}

/** One string per (scope, key), without a separator a key could contain. */
const recordId = (scope: string, key: string) => JSON.stringify([scope, key]);

const refOf = (input: ClaimInput, token: string): ClaimRef => ({
  scope: input.scope,
  key: input.key,
  token,
  action: input.action,
});

/** Stored and handed out as copies, so a caller changing its buffer or headers cannot change a replay. */
function copyResponse(response: StoredResponse): StoredResponse {
  const copy = {
    status: response.status,
    headers: { ...response.headers },
    body: Buffer.from(response.body),
  };
  return response.bodySha256 === undefined
    ? copy
    : { ...copy, body: Buffer.alloc(0), bodySha256: response.bodySha256 };
}

function toExisting(record: MemoryRecord, now: number): ExistingRecord {
  const leaseLive = record.status === 'PROCESSING' && !record.released && record.lockedUntil > now;
  const response = record.response && copyResponse(record.response);
  return {
    status: record.status,
    fingerprint: record.fingerprint,
    algorithm: record.algorithm,
    leaseLive,
    leaseRemainingMs: leaseLive ? record.lockedUntil - now : 0,
    ...(response ? { response, notReplayable: response.bodySha256 !== undefined } : {}),
  };
}
