import type Database from 'better-sqlite3';
import { newFencingToken } from './keys.js';
import type { SqlitePool } from './pool.js';
import type { StepRecord, StepStore } from './saga.js';
import {
  LeaseLostError,
  OutcomeUnknownError,
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyStore,
  type OpenTransaction,
  type RecordStatus,
  type StoredResponse,
  type TransactionClaimResult,
} from './types.js';

export interface SqliteStoreOptions {
  readonly pool: SqlitePool;
  readonly table: string;
  readonly stepTable: string;
  /** Longest wait for SQLite's write lock (held by another request's transaction or another process). */
  readonly timeoutMs: number;
  readonly acquireTimeoutMs?: number;
  readonly lockTimeoutMs?: number;
}

interface RecordRow {
  status: RecordStatus;
  fingerprint: string;
  fingerprint_alg: string;
  fencing_token: string;
  attempts: number;
  created_at: number;
  lease_live: number;
  lease_remaining_ms: number | null;
  released: number;
  expired: number;
  response_status: number | null;
  response_headers: string | null;
  response_body: Buffer | null;
  response_hash: string | null;
}

/** SQLite has no schemas of that kind: a dotted table name from the design is one identifier with underscores. */
export const quoteIdent = (name: string) => `"${name.replace(/\./g, '_').replace(/"/g, '""')}"`;

// Milliseconds since the epoch from SQLite itself; one host owns the file, so there is one clock.
export const NOW_MS = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;

function statements(table: string, stepTable: string) {
  const t = quoteIdent(table);
  const steps = quoteIdent(stepTable);
  return {
    read: `SELECT status, fingerprint, fingerprint_alg, fencing_token, attempts, created_at,
  locked_until > ${NOW_MS} AS lease_live, MAX(0, locked_until - ${NOW_MS}) AS lease_remaining_ms,
  released_at IS NOT NULL AS released, expires_at <= ${NOW_MS} AS expired,
  response_status, response_headers, response_body, response_hash
FROM ${t} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${t} (scope, key, action, fingerprint, fingerprint_alg, status, fencing_token, attempts,
  locked_until, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, 'PROCESSING', ?, 1, ${NOW_MS} + ?, ?, ${NOW_MS} + ?)`,
    // A new record's created_at, read once so the claim can return exactly what it stored.
    clock: `SELECT ${NOW_MS} AS now_ms`,
    takeover: `UPDATE ${t} SET action = ?, fingerprint = ?, fingerprint_alg = ?, status = 'PROCESSING', fencing_token = ?,
  attempts = ?, locked_until = ${NOW_MS} + ?, released_at = NULL, response_status = NULL, response_headers = NULL,
  response_body = NULL, response_hash = NULL, completed_at = NULL,
  created_at = ?, expires_at = ${NOW_MS} + ?
WHERE scope = ? AND key = ?`,
    purgeSteps: `DELETE FROM ${steps} WHERE scope = ? AND key = ?`,
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
 * SQLite implementation of the store (better-sqlite3): every write runs under BEGIN IMMEDIATE, SQLite's single
 * write lock, so deciding on a key and writing it is one atomic step; WAL lets reads proceed meanwhile.
 */
export class SqliteIdempotencyStore implements IdempotencyStore, StepStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly options: SqliteStoreOptions) {
    this.sql = statements(options.table, options.stepTable);
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const db = this.options.pool.db;
    const holder = this.options.pool.openClaims.get(`${input.scope}\u0000${input.key}`);
    if (holder?.open && holder.inTransaction) return { outcome: 'existing', record: busy(input) };
    return this.write('claim', db, () => {
      const result = this.claimOn(db, input);
      return result.outcome === 'claimed'
        ? {
            outcome: 'claimed',
            ref: result.ref,
            reclaimed: result.reclaimed,
            attempt: result.attempt,
            startedAt: result.startedAt,
          }
        : result;
    });
  }

  /**
   * Transactional mode: the claim's BEGIN IMMEDIATE transaction stays open on a connection of its own (`db`), so
   * the handler's writes and the completion commit together. Other writers wait for it (at most the lock wait).
   */
  async claimInTransaction(input: ClaimInput): Promise<TransactionClaimResult> {
    const { pool } = this.options;
    // A duplicate of a claim whose transaction is open in this process is in flight: answer at once, rather than
    // wait for the write lock that transaction holds. (From another process it waits, then fails closed.)
    const id = `${input.scope}\u0000${input.key}`;
    const holder = pool.openClaims.get(id);
    if (holder?.open && holder.inTransaction) return { outcome: 'existing', record: busy(input) };
    pool.openClaims.delete(id);
    let db: Database.Database;
    try {
      db = pool.connect();
    } catch (error) {
      throw wrap('claim', error);
    }
    let result: ReturnType<SqliteIdempotencyStore['claimOn']>;
    try {
      result = await this.locked('claim', db, () => this.claimOn(db, input));
    } catch (error) {
      finish(pool, db, 'ROLLBACK');
      throw wrap('claim', error);
    }
    if (result.outcome === 'existing') {
      finish(pool, db, 'ROLLBACK');
      return result;
    }
    const { ref } = result;
    pool.openClaims.set(id, db);
    const transaction: OpenTransaction = {
      ref,
      db,
      commit: async (status, response, retentionMs) => {
        try {
          const { changes } = db
            .prepare(this.sql.complete)
            .run(...completeValues(ref, status, response, retentionMs));
          if (changes !== 1) throw new StoreUnavailableError('complete');
        } catch (error) {
          // Nothing was committed: the claim and the action's writes are rolled back together.
          pool.openClaims.delete(id);
          finish(pool, db, 'ROLLBACK');
          throw wrap('complete', error);
        }
        try {
          db.exec('COMMIT');
        } catch (error) {
          // SQLite answers synchronously: a refused COMMIT leaves the transaction to roll back; a closed
          // connection cannot have committed either. Only an I/O error leaves the outcome open.
          const code = (error as { code?: unknown })?.code;
          pool.openClaims.delete(id);
          finish(pool, db, 'ROLLBACK');
          if (typeof code === 'string' && code.startsWith('SQLITE_IOERR'))
            throw new OutcomeUnknownError({ cause: error });
          throw new StoreUnavailableError('commit', { cause: error });
        }
        pool.openClaims.delete(id);
        pool.release(db);
      },
      rollback: async () => {
        pool.openClaims.delete(id);
        finish(pool, db, 'ROLLBACK');
      },
    };
    return { outcome: 'claimed', transaction, attempt: result.attempt, startedAt: result.startedAt };
  }

  /** Runs inside BEGIN IMMEDIATE: read, then insert or take over, with nobody else writing in between. */
  private claimOn(db: Database.Database, input: ClaimInput) {
    const token = newFencingToken();
    const ref: ClaimRef = { scope: input.scope, key: input.key, token, action: input.action };
    const row = db.prepare(this.sql.read).get(input.scope, input.key) as RecordRow | undefined;
    const values = [input.action, input.fingerprint, input.algorithm, token] as const;
    // created_at: kept by a reclaim (the same on every attempt), this claim's time for a new or expired record.
    const now = () => Number((db.prepare(this.sql.clock).get() as { now_ms: number }).now_ms);
    if (!row) {
      const startedAt = now();
      db.prepare(this.sql.insert).run(
        input.scope,
        input.key,
        ...values,
        input.leaseMs,
        startedAt,
        input.retentionMs,
      );
      return { outcome: 'claimed' as const, ref, reclaimed: 'no' as const, attempt: 1, startedAt };
    }
    const lapsed =
      row.status === 'PROCESSING' &&
      !row.lease_live &&
      row.fingerprint === input.fingerprint &&
      row.fingerprint_alg === input.algorithm;
    if (!row.expired && !lapsed) return { outcome: 'existing' as const, record: toRecord(row) };
    const attempt = row.expired ? 1 : row.attempts + 1;
    const startedAt = row.expired ? now() : Number(row.created_at);
    if (row.expired) db.prepare(this.sql.purgeSteps).run(input.scope, input.key);
    db.prepare(this.sql.takeover).run(
      ...values,
      attempt,
      input.leaseMs,
      startedAt,
      input.retentionMs,
      input.scope,
      input.key,
    );
    const reclaimed = row.expired
      ? ('expired' as const)
      : row.released
        ? ('released' as const)
        : ('orphan' as const);
    return { outcome: 'claimed' as const, ref, reclaimed, attempt, startedAt };
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    try {
      const row = this.options.pool.db.prepare(this.sql.read).get(scope, key) as RecordRow | undefined;
      return row ? toRecord(row) : undefined;
    } catch (error) {
      throw wrap('read', error);
    }
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    return this.change('complete', this.sql.complete, completeValues(ref, status, response, retentionMs));
  }

  async release(ref: ClaimRef): Promise<boolean> {
    return this.change('release', this.sql.release, [ref.scope, ref.key, ref.token]);
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    return this.change('extend', this.sql.extend, [Math.round(leaseMs), ref.scope, ref.key, ref.token]);
  }

  /** Saga steps: in transactional mode on the claim's open transaction (`db`), otherwise under the write lock. */
  async loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>> {
    const db = ((claim as { db?: unknown }).db as Database.Database | undefined) ?? this.options.pool.db;
    try {
      const rows = db.prepare(this.sql.loadSteps).all(claim.scope, claim.key) as Array<{
        step_index: number;
        status: 'DONE' | 'COMPENSATED';
        result: string | null;
      }>;
      return new Map(
        rows.map((row) => [
          row.step_index,
          { index: row.step_index, status: row.status, result: JSON.parse(row.result ?? 'null') as unknown },
        ]),
      );
    } catch (error) {
      throw wrap('saga', error);
    }
  }

  async recordStep(
    claim: ClaimRef,
    step: { readonly index: number; readonly name: string; readonly subKey: string },
    status: 'DONE' | 'COMPENSATED',
    result: unknown,
  ): Promise<void> {
    const values = [
      claim.scope,
      claim.key,
      step.index,
      step.name,
      step.subKey,
      status,
      JSON.stringify(result ?? null),
    ];
    const args = [...values, claim.scope, claim.key, claim.token];
    const own = (claim as { db?: unknown }).db as Database.Database | undefined;
    const changes = own
      ? own.prepare(this.sql.recordStep).run(...args).changes
      : await this.write(
          'saga',
          this.options.pool.db,
          () => this.options.pool.db.prepare(this.sql.recordStep).run(...args).changes,
        );
    if (changes === 0) throw new LeaseLostError();
  }

  private async change(operation: string, sql: string, values: unknown[]): Promise<boolean> {
    const db = this.options.pool.db;
    return this.write(operation, db, () => db.prepare(sql).run(...values).changes === 1);
  }

  /** Runs `work` synchronously inside BEGIN IMMEDIATE on `db`, then commits; any error rolls it back. */
  async write<T>(operation: string, db: Database.Database, work: () => T): Promise<T> {
    return this.locked(operation, db, () => {
      const result = work();
      db.exec('COMMIT');
      return result;
    });
  }

  /**
   * Takes the write lock and runs `locked` synchronously right after BEGIN IMMEDIATE (no await in between, so no
   * other request's statements can slip into this transaction). While another connection (a transactional request,
   * another process) holds the lock it waits asynchronously; past the lock wait the call fails closed.
   */
  private async locked<T>(operation: string, db: Database.Database, locked: () => T): Promise<T> {
    const deadline = Date.now() + (this.options.lockTimeoutMs ?? this.options.timeoutMs);
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      if (!db.inTransaction) {
        try {
          db.exec('BEGIN IMMEDIATE');
          return locked();
        } catch (error) {
          const code = (error as { code?: unknown })?.code;
          if (db.open && db.inTransaction) db.exec('ROLLBACK');
          if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw wrap(operation, error);
        }
      }
      if (Date.now() >= deadline) throw new StoreUnavailableError(operation);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Ends a transaction on a dedicated connection and gives the connection back (or drops it if it is gone). */
function finish(pool: SqlitePool, db: Database.Database, statement: 'ROLLBACK'): void {
  try {
    if (db.open && db.inTransaction) db.exec(statement);
  } catch {
    // the transaction is gone with its connection
  }
  pool.release(db);
}

/** A duplicate of an open transactional claim: answer as for a live claim. */
function busy(input: ClaimInput): ExistingRecord {
  return {
    status: 'PROCESSING',
    fingerprint: input.fingerprint,
    algorithm: input.algorithm,
    leaseLive: true,
    leaseRemainingMs: input.leaseMs,
  };
}

function wrap(operation: string, error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof LeaseLostError) return error;
  return new StoreUnavailableError(operation, { cause: error });
}

function completeValues(
  ref: ClaimRef,
  status: string,
  response: StoredResponse,
  retentionMs: number,
): unknown[] {
  return [
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
}

function toRecord(row: RecordRow): ExistingRecord {
  const response: StoredResponse | undefined =
    row.response_status === null
      ? undefined
      : {
          status: row.response_status,
          headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
          body: row.response_body ?? Buffer.alloc(0),
        };
  return {
    status: row.status,
    fingerprint: row.fingerprint,
    algorithm: row.fingerprint_alg,
    leaseLive: row.lease_live === 1,
    leaseRemainingMs: Number(row.lease_remaining_ms ?? 0),
    response,
    notReplayable: row.response_body === null && typeof row.response_hash === 'string',
  };
}
