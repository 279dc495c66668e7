import { performance } from 'node:perf_hooks';
import type { Client, InStatement, InValue, Row } from '@libsql/client';
import { newFencingToken } from './keys.js';
import type { StepRecord, StepStore } from './saga.js';
import {
  LeaseLostError,
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyStore,
  type RecordStatus,
  type StoredResponse,
} from './types.js';

export interface LibsqlStoreOptions {
  /** A libSQL client (createPool from ./pool.js, or your app's own createClient()). */
  readonly pool: Client;
  readonly table: string;
  readonly stepTable: string;
  /** Longest wait for each store call's answer; past it the call fails closed. */
  readonly timeoutMs: number;
  /** Longest wait for the database's write lock while another writer holds it; default timeoutMs. */
  readonly lockTimeoutMs?: number;
}

/** A dotted table name from the design becomes one identifier with underscores, as in the migration. */
export const quoteIdent = (name: string) => `"${name.replace(/\./g, '_').replace(/"/g, '""')}"`;

// Milliseconds since the epoch on the database's clock: the server's for a remote database, the host's for a file.
export const NOW_MS = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;

// `?1` is the claim's deadline on the database clock (NULL: none): a claim that runs later takes nothing.
const OPEN = `(?1 IS NULL OR ${NOW_MS} <= ?1)`;

function statements(table: string, stepTable: string) {
  const t = quoteIdent(table);
  const steps = quoteIdent(stepTable);
  const record = `status, fingerprint, fingerprint_alg, attempts, created_at,
  locked_until > ${NOW_MS} AS lease_live, MAX(0, locked_until - ${NOW_MS}) AS lease_remaining_ms,
  released_at IS NOT NULL AS released, expires_at <= ${NOW_MS} AS expired,
  response_status, response_headers, response_body, response_hash`;
  return {
    // The claim is one write batch (BEGIN IMMEDIATE … COMMIT in one round trip), so nothing else writes between
    // these three statements. `previous` reads the record as it was: it answers a replay or a conflict when nothing
    // is taken. Argument ?1 is the deadline, ?2 and ?3 the scope and key.
    previous: `SELECT ${NOW_MS} AS db_ms, ${OPEN} AS open, p.*
FROM (SELECT 1) AS g LEFT JOIN (SELECT ${record} FROM ${t} WHERE scope = ?2 AND key = ?3) AS p ON 1`,
    // An expired record starts over: its saga steps go with it.
    purge: `DELETE FROM ${steps} WHERE scope = ?2 AND key = ?3 AND ${OPEN}
  AND EXISTS (SELECT 1 FROM ${t} WHERE scope = ?2 AND key = ?3 AND expires_at <= ${NOW_MS})`,
    // Inserts a new key, or takes over one that expired, or reclaims a lapsed lease of the same request with this
    // claim's fencing token; a record that decides the request (finished, live lease, other fingerprint) is left as
    // it is and RETURNING answers nothing. Every time is the database's.
    claim: `INSERT INTO ${t} (scope, key, action, fingerprint, fingerprint_alg, status, fencing_token, attempts,
  locked_until, created_at, expires_at)
SELECT ?2, ?3, ?4, ?5, ?6, 'PROCESSING', ?7, 1, ${NOW_MS} + ?8, ${NOW_MS}, ${NOW_MS} + ?9 WHERE ${OPEN}
ON CONFLICT (scope, key) DO UPDATE SET action = excluded.action, fingerprint = excluded.fingerprint,
  fingerprint_alg = excluded.fingerprint_alg, status = 'PROCESSING', fencing_token = excluded.fencing_token,
  locked_until = excluded.locked_until, released_at = NULL, response_status = NULL, response_headers = NULL,
  response_body = NULL, response_hash = NULL, completed_at = NULL,
  -- A takeover counts as another attempt (the action may have taken effect); an expired key starts over.
  attempts = CASE WHEN expires_at <= ${NOW_MS} THEN 1 ELSE attempts + 1 END,
  created_at = CASE WHEN expires_at <= ${NOW_MS} THEN excluded.created_at ELSE created_at END,
  expires_at = excluded.expires_at
WHERE expires_at <= ${NOW_MS}
  OR (status = 'PROCESSING' AND locked_until <= ${NOW_MS}
    AND fingerprint = excluded.fingerprint AND fingerprint_alg = excluded.fingerprint_alg)
RETURNING fencing_token, attempts, created_at`,
    clock: `SELECT ${NOW_MS} AS db_ms`,
    read: `SELECT ${record} FROM ${t} WHERE scope = ? AND key = ?`,
    // Every write after the claim is fenced by the token. Completing twice with the same token is allowed, so a
    // completion whose answer was lost can be retried.
    complete: `UPDATE ${t} SET status = ?, response_status = ?, response_headers = ?, response_body = ?, response_hash = ?,
  completed_at = ${NOW_MS}, locked_until = NULL, expires_at = ${NOW_MS} + ?
WHERE scope = ? AND key = ? AND fencing_token = ? AND (status = 'PROCESSING' OR completed_at IS NOT NULL)`,
    release: `UPDATE ${t} SET locked_until = ${NOW_MS}, released_at = ${NOW_MS}
WHERE scope = ? AND key = ? AND fencing_token = ? AND status = 'PROCESSING'`,
    extend: `UPDATE ${t} SET locked_until = ${NOW_MS} + ?
WHERE scope = ? AND key = ? AND fencing_token = ? AND status = 'PROCESSING' AND released_at IS NULL`,
    loadSteps: `SELECT step_index, status, result FROM ${steps} WHERE scope = ? AND key = ?`,
    recordStep: `INSERT INTO ${steps} (scope, key, step_index, step_name, sub_key, status, result, updated_at)
SELECT ?, ?, ?, ?, ?, ?, ?, ${NOW_MS} FROM ${t}
WHERE scope = ? AND key = ? AND fencing_token = ? AND status = 'PROCESSING'
ON CONFLICT (scope, key, step_index) DO UPDATE SET status = excluded.status, result = excluded.result,
  updated_at = excluded.updated_at`,
  };
}

/**
 * libSQL implementation of the store (@libsql/client), for a remote database (Turso, sqld) or a local file. A claim
 * is one write batch: one round trip that reads the key and inserts or takes it over under the database's single
 * write lock. Every other call is one statement. libSQL has no transaction the action's own writes could share
 * with the claim without holding that lock across the handler, so every action runs in lease mode.
 */
export class LibsqlIdempotencyStore implements IdempotencyStore, StepStore {
  private readonly sql: ReturnType<typeof statements>;
  private readonly clock = new DatabaseClock();

  constructor(private readonly options: LibsqlStoreOptions) {
    this.sql = statements(options.table, options.stepTable);
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const token = newFencingToken();
    const ref: ClaimRef = {
      scope: input.scope,
      key: input.key,
      token,
      action: input.action,
    };
    const started = performance.now();
    // The deadline is on the database clock: the first claim of this store reads it once.
    if (!this.clock.isKnown()) {
      const rows = await this.call('claim', () => this.options.pool.execute(this.sql.clock), started);
      this.clock.observe(Number(rows.rows[0]?.db_ms));
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const sent = performance.now();
      const deadline = this.clock.at(sent + this.options.timeoutMs);
      const args: InValue[] = [
        deadline ?? null,
        input.scope,
        input.key,
        input.action,
        input.fingerprint,
        input.algorithm,
        token,
        Math.round(input.leaseMs),
        Math.round(input.retentionMs),
      ];
      const batch: InStatement[] = [
        { sql: this.sql.previous, args: args.slice(0, 3) },
        { sql: this.sql.purge, args: args.slice(0, 3) },
        { sql: this.sql.claim, args },
      ];
      const [previous, , claimed] = await this.call(
        'claim',
        () => this.options.pool.batch(batch, 'write'),
        started,
        // A claim answered after the store gave up may have taken the key: give it straight back.
        (late) => {
          if (late[2]?.rows[0]) void this.release(ref).catch(() => undefined);
        },
      );
      const before = previous?.rows[0];
      if (before) this.clock.observe(Number(before.db_ms));
      const row = claimed?.rows[0];
      if (row && String(row.fencing_token) === token) {
        const reclaimed: 'no' | 'orphan' | 'released' | 'expired' =
          before?.status == null
            ? 'no'
            : Number(before.expired) === 1
              ? 'expired'
              : Number(before.released) === 1
                ? 'released'
                : 'orphan';
        return {
          outcome: 'claimed',
          ref,
          reclaimed,
          attempt: Number(row.attempts),
          startedAt: Number(row.created_at),
        };
      }
      // Ran after its deadline (a slow network or a stalled server): nothing was taken, and since this answer did
      // arrive, another attempt with a new deadline is safe.
      if (before && Number(before.open) !== 1) continue;
      if (before?.status != null) return { outcome: 'existing', record: toRecord(before) };
      throw new StoreUnavailableError('claim');
    }
    throw new StoreUnavailableError('claim');
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const { rows } = await this.call('read', () =>
      this.options.pool.execute({ sql: this.sql.read, args: [scope, key] }),
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const args: InValue[] = [
      status,
      response.status,
      JSON.stringify(response.headers),
      response.bodySha256 === undefined ? response.body : null,
      response.bodySha256 ?? null,
      Math.round(retentionMs),
      ref.scope,
      ref.key,
      ref.token,
    ];
    return this.change('complete', this.sql.complete, args);
  }

  async release(ref: ClaimRef): Promise<boolean> {
    return this.change('release', this.sql.release, [ref.scope, ref.key, ref.token]);
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    return this.change('extend', this.sql.extend, [Math.round(leaseMs), ref.scope, ref.key, ref.token]);
  }

  async loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>> {
    const { rows } = await this.call('saga', () =>
      this.options.pool.execute({
        sql: this.sql.loadSteps,
        args: [claim.scope, claim.key],
      }),
    );
    return new Map(
      rows.map((row) => {
        const index = Number(row.step_index);
        const status = String(row.status) as 'DONE' | 'COMPENSATED';
        const result = JSON.parse(row.result == null ? 'null' : String(row.result)) as unknown;
        return [index, { index, status, result }];
      }),
    );
  }

  async recordStep(
    claim: ClaimRef,
    step: {
      readonly index: number;
      readonly name: string;
      readonly subKey: string;
    },
    status: 'DONE' | 'COMPENSATED',
    result: unknown,
  ): Promise<void> {
    const args: InValue[] = [
      claim.scope,
      claim.key,
      step.index,
      step.name,
      step.subKey,
      status,
      JSON.stringify(result ?? null),
      claim.scope,
      claim.key,
      claim.token,
    ];
    const { rowsAffected } = await this.call('saga', () =>
      this.options.pool.execute({ sql: this.sql.recordStep, args }),
    );
    if (rowsAffected === 0) throw new LeaseLostError();
  }

  private async change(operation: string, sql: string, args: InValue[]): Promise<boolean> {
    const { rowsAffected } = await this.call(operation, () => this.options.pool.execute({ sql, args }));
    return rowsAffected === 1;
  }

  /**
   * One store call, bounded: its answer must arrive within timeoutMs (the client has no time-out of its own), and
   * while another writer holds the write lock (SQLITE_BUSY: another process on a local file) it is retried with
   * short pauses, without blocking the event loop, until the lock wait runs out. `late` sees an answer that arrives
   * after the store gave up. Every failure is a StoreUnavailableError: the caller fails closed.
   */
  private async call<T>(
    operation: string,
    send: () => Promise<T>,
    started = performance.now(),
    late?: (answer: T) => void,
  ): Promise<T> {
    const lockDeadline = started + (this.options.lockTimeoutMs ?? this.options.timeoutMs);
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      try {
        const since = performance.now();
        return await bounded(send(), this.options.timeoutMs, late, since);
      } catch (error) {
        if (!isBusy(error) || performance.now() >= lockDeadline) throw wrap(operation, error);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Resolves with `work`'s answer, or rejects once `timeoutMs` passed since `since`; an answer after that goes to
 * `late`. A timer counts from the event loop's cached clock and can fire early on a busy process, so the time-out is
 * checked against the monotonic clock and re-armed for what is left: the store never gives up before a claim's
 * deadline, which is computed from that same clock.
 */
function bounded<T>(
  work: Promise<T>,
  timeoutMs: number,
  late?: (answer: T) => void,
  since = performance.now(),
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const expire = () => {
      const left = since + timeoutMs - performance.now();
      if (left > 0) {
        timer = setTimeout(expire, Math.ceil(left));
        return;
      }
      settled = true;
      reject(new StoreUnavailableError('timeout'));
    };
    let timer = setTimeout(expire, timeoutMs);
    work.then(
      (answer) => {
        clearTimeout(timer);
        if (!settled) resolve(answer);
        else late?.(answer);
        settled = true;
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!settled) reject(error);
        settled = true;
      },
    );
  });
}

/**
 * The database clock as seen from here: its offset to this process's monotonic clock, from the readings every claim
 * returns. The tightest reading (the largest offset) is kept for a while, so the claim's deadline, converted to the
 * database clock, is never later than the moment the store stops waiting for the claim.
 */
class DatabaseClock {
  private offsetMs: number | undefined;
  private observedAt = 0;

  isKnown(): boolean {
    return this.offsetMs !== undefined;
  }

  observe(databaseMs: number): void {
    if (!Number.isFinite(databaseMs)) return;
    const now = performance.now();
    const offset = databaseMs - now;
    if (this.offsetMs === undefined || offset >= this.offsetMs || now - this.observedAt > OFFSET_TTL_MS) {
      this.offsetMs = offset;
      this.observedAt = now;
    }
  }

  at(localMs: number): number | undefined {
    return this.offsetMs === undefined ? undefined : Math.floor(localMs + this.offsetMs);
  }
}

/** How long the tightest clock reading is trusted before a newer (possibly looser) one replaces it. */
const OFFSET_TTL_MS = 10_000;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function wrap(operation: string, error: unknown): Error {
  if (error instanceof LeaseLostError) return error;
  if (error instanceof StoreUnavailableError && error.operation === operation) return error;
  return new StoreUnavailableError(operation, { cause: error });
}

function toRecord(row: Row): ExistingRecord {
  const body = row.response_body;
  const bytes = body == null ? null : Buffer.from(body as ArrayBuffer);
  const response: StoredResponse | undefined =
    row.response_status == null
      ? undefined
      : {
          status: Number(row.response_status),
          headers: JSON.parse(String(row.response_headers ?? '{}')) as Record<string, string>,
          body: bytes ?? Buffer.alloc(0),
        };
  return {
    status: String(row.status) as RecordStatus,
    fingerprint: String(row.fingerprint),
    algorithm: String(row.fingerprint_alg),
    leaseLive: Number(row.lease_live) === 1,
    leaseRemainingMs: Number(row.lease_remaining_ms ?? 0),
    response,
    notReplayable: bytes === null && typeof row.response_hash === 'string',
  };
}
