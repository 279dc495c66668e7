import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { newFencingToken } from './keys.js';
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

export interface MysqlStoreOptions {
  readonly pool: Pool;
  readonly table: string;
  readonly stepTable: string;
  /** Client-side bound on each store statement; a connection that overruns it is destroyed (its transaction rolls back). */
  readonly timeoutMs: number;
  /** Longest wait for a pooled connection, counted separately; default timeoutMs. */
  readonly acquireTimeoutMs?: number;
  /** innodb_lock_wait_timeout for a claim waiting on a concurrent duplicate (whole seconds, at least 1). */
  readonly lockTimeoutMs?: number;
}

interface RecordRow extends RowDataPacket {
  status: RecordStatus;
  fingerprint: string;
  fingerprint_alg: string;
  lease_live: number | null;
  lease_remaining_ms: number | string | null;
  response_status: number | null;
  response_headers: string | null;
  response_body: Buffer | null;
  response_hash: string | null;
}

interface ClaimRow extends RecordRow {
  mine: number;
  attempts: number;
  /** created_at and the server's clock now, as epoch ms. */
  started_ms: number | string;
  now_ms: number | string;
  released: number;
  expired: number;
}

export const quoteIdent = (name: string) =>
  name
    .split('.')
    .map((part) => `\`${part.replace(/`/g, '``')}\``)
    .join('.');

// All times come from the server clock (UTC_TIMESTAMP), never from application servers.
const NOW = 'UTC_TIMESTAMP(3)';
const RECORD_COLUMNS = `status, fingerprint, fingerprint_alg,
  locked_until > ${NOW} AS lease_live,
  GREATEST(0, TIMESTAMPDIFF(MICROSECOND, ${NOW}, locked_until)) DIV 1000 AS lease_remaining_ms,
  response_status, response_headers, response_body, response_hash`;
/** Epoch ms of a UTC datetime column or expression, and back: exact for datetime(3), independent of time zones. */
const EPOCH = `'1970-01-01 00:00:00'`;
const epochMs = (expression: string) => `TIMESTAMPDIFF(MICROSECOND, ${EPOCH}, ${expression}) DIV 1000`;

function statements(table: string, stepTable: string) {
  const t = quoteIdent(table);
  const steps = quoteIdent(stepTable);
  return {
    // A no-op on a duplicate, but it takes the key's row lock either way: a concurrent duplicate waits here (at
    // most innodb_lock_wait_timeout) until this transaction ends, so two workers never decide on the same row.
    insert: `INSERT INTO ${t} (scope, \`key\`, action, fingerprint, fingerprint_alg, status, fencing_token, attempts,
  locked_until, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, 'PROCESSING', ?, 1, ${NOW} + INTERVAL ? MICROSECOND, ${NOW}, ${NOW} + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE scope = scope`,
    // Under that lock: is the row ours (just inserted), expired, or a lapsed lease we may take over?
    locked: `SELECT ${RECORD_COLUMNS}, fencing_token = ? AS mine, attempts, released_at IS NOT NULL AS released,
  expires_at <= ${NOW} AS expired, ${epochMs('created_at')} AS started_ms, ${epochMs(NOW)} AS now_ms
FROM ${t} WHERE scope = ? AND \`key\` = ? FOR UPDATE`,
    // Conditional takeover with a new fencing token; the WHERE re-checks the conditions on the locked row.
    // created_at is the one the claim decided on: kept by a reclaim, the locked read's clock for an expired record.
    takeover: `UPDATE ${t} SET action = ?, fingerprint = ?, fingerprint_alg = ?, status = 'PROCESSING', fencing_token = ?,
  attempts = ?, locked_until = ${NOW} + INTERVAL ? MICROSECOND, released_at = NULL, response_status = NULL,
  response_headers = NULL, response_body = NULL, response_hash = NULL, completed_at = NULL,
  created_at = TIMESTAMPADD(MICROSECOND, ? * 1000, ${EPOCH}), expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE scope = ? AND \`key\` = ?
  AND (expires_at <= ${NOW} OR (status = 'PROCESSING' AND locked_until <= ${NOW} AND fingerprint = ? AND fingerprint_alg = ?))`,
    purgeSteps: `DELETE FROM ${steps} WHERE scope = ? AND \`key\` = ?`,
    read: `SELECT ${RECORD_COLUMNS} FROM ${t} WHERE scope = ? AND \`key\` = ?`,
    // Every write after the claim is fenced by the token. Completing twice with the same token is allowed, so a
    // completion whose answer was lost can be retried safely.
    complete: `UPDATE ${t} SET status = ?, response_status = ?, response_headers = ?, response_body = ?, response_hash = ?,
  completed_at = ${NOW}, locked_until = NULL, expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE scope = ? AND \`key\` = ? AND fencing_token = ? AND (status = 'PROCESSING' OR completed_at IS NOT NULL)`,
    release: `UPDATE ${t} SET locked_until = ${NOW}, released_at = ${NOW}
WHERE scope = ? AND \`key\` = ? AND fencing_token = ? AND status = 'PROCESSING'`,
    extend: `UPDATE ${t} SET locked_until = ${NOW} + INTERVAL ? MICROSECOND
WHERE scope = ? AND \`key\` = ? AND fencing_token = ? AND status = 'PROCESSING' AND released_at IS NULL`,
    loadSteps: `SELECT step_index, status, result FROM ${steps} WHERE scope = ? AND \`key\` = ?`,
    // INSERT ... SELECT takes a shared lock on the parent row: a concurrent takeover waits for this write, or this
    // write sees the new token and inserts nothing.
    recordStep: `INSERT INTO ${steps} (scope, \`key\`, step_index, step_name, sub_key, status, result, updated_at)
SELECT ?, ?, ?, ?, ?, ?, ?, ${NOW} FROM ${t}
WHERE scope = ? AND \`key\` = ? AND fencing_token = ? AND status = 'PROCESSING'
ON DUPLICATE KEY UPDATE status = VALUES(status), result = VALUES(result), updated_at = VALUES(updated_at)`,
  };
}

/** MySQL 8 / MariaDB 10.5+ (InnoDB) implementation of the store on a mysql2 pool; see the migration for the tables. */
export class MysqlIdempotencyStore implements IdempotencyStore, StepStore {
  private readonly sql: ReturnType<typeof statements>;
  /** innodb_lock_wait_timeout for the claim: how long it waits behind a concurrent duplicate's transaction. */
  private readonly lockSeconds: number;

  constructor(private readonly options: MysqlStoreOptions) {
    this.sql = statements(options.table, options.stepTable);
    this.lockSeconds = Math.max(1, Math.ceil((options.lockTimeoutMs ?? options.timeoutMs / 2) / 1000));
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    for (let attempt = 0; ; attempt++) {
      const session = await this.session('claim');
      try {
        const result = await this.claimOn(session, input);
        await session.run('COMMIT');
        session.done();
        return result.outcome === 'claimed'
          ? {
              outcome: 'claimed',
              ref: result.ref,
              reclaimed: result.reclaimed,
              attempt: result.attempt,
              startedAt: result.startedAt,
            }
          : result;
      } catch (error) {
        await session.fail(error);
        if (isLockWaitTimeout(error)) return { outcome: 'existing', record: busy(input) };
        // InnoDB chose this claim as a deadlock victim and rolled it back: nothing happened, start again.
        if (isDeadlock(error) && attempt < 3) continue;
        throw wrap('claim', error);
      }
    }
  }

  /**
   * Transactional mode: the claim's transaction stays open on one connection (`db`), so the handler's writes and
   * the completion commit together. Concurrent duplicates wait on the key's row lock (then 409), or replay.
   */
  async claimInTransaction(input: ClaimInput): Promise<TransactionClaimResult> {
    const session = await this.session('claim');
    let result: ClaimResult;
    try {
      result = await this.claimOn(session, input);
    } catch (error) {
      await session.fail(error);
      if (isLockWaitTimeout(error) || isDeadlock(error)) return { outcome: 'existing', record: busy(input) };
      throw wrap('claim', error);
    }
    if (result.outcome === 'existing') {
      await session.end('ROLLBACK');
      return result;
    }
    const { ref } = result;
    // The handler's own statements run on `db` directly: bounded by the action's lease, not by the store's budget.
    const transaction: OpenTransaction = {
      ref,
      db: session.connection,
      commit: async (status, response, retentionMs) => {
        try {
          const [header] = await session.run<ResultSetHeader>(
            this.sql.complete,
            completeValues(ref, status, response, retentionMs),
          );
          if (header.affectedRows !== 1) throw new StoreUnavailableError('complete');
        } catch (error) {
          // Nothing was committed: the claim and the action's writes are rolled back together.
          await session.fail(error);
          throw wrap('complete', error);
        }
        try {
          await session.run('COMMIT');
          session.done();
        } catch (error) {
          const answered = isServerError(error);
          await session.fail(error);
          // The server refused the COMMIT: rolled back. No answer at all: it may or may not have committed.
          if (answered) throw new StoreUnavailableError('commit', { cause: error });
          throw new OutcomeUnknownError({ cause: error });
        }
      },
      rollback: () => session.end('ROLLBACK'),
    };
    return { outcome: 'claimed', transaction, attempt: result.attempt, startedAt: result.startedAt };
  }

  private async claimOn(session: Session, input: ClaimInput): Promise<ClaimResult> {
    await session.run(`SET SESSION innodb_lock_wait_timeout = ${this.lockSeconds}`);
    await session.run('START TRANSACTION');
    const token = newFencingToken();
    const lease = Math.round(input.leaseMs * 1000);
    const retention = Math.round(input.retentionMs * 1000);
    // Waits behind a concurrent duplicate's open transaction for at most innodb_lock_wait_timeout (then errno 1205).
    const values = [
      input.scope,
      input.key,
      input.action,
      input.fingerprint,
      input.algorithm,
      token,
      lease,
      retention,
    ];
    // The short wait is for this statement only: the connection goes back to the server default before a
    // transactional handler (or anything else sharing the pool) uses it.
    try {
      await session.run(this.sql.insert, values, this.lockSeconds * 1000);
    } finally {
      await session.run('SET SESSION innodb_lock_wait_timeout = DEFAULT').catch(() => undefined);
    }
    const [rows] = await session.run<ClaimRow[]>(this.sql.locked, [token, input.scope, input.key]);
    const row = rows[0];
    if (!row) throw new StoreUnavailableError('claim');
    const ref: ClaimRef = { scope: input.scope, key: input.key, token, action: input.action };
    if (row.mine) {
      return {
        outcome: 'claimed' as const,
        ref,
        reclaimed: 'no' as const,
        attempt: 1,
        startedAt: Number(row.started_ms),
      };
    }
    const lapsed =
      row.status === 'PROCESSING' &&
      !row.lease_live &&
      row.fingerprint === input.fingerprint &&
      row.fingerprint_alg === input.algorithm;
    if (!row.expired && !lapsed) return { outcome: 'existing' as const, record: toRecord(row) };
    // A takeover counts as another attempt (the action may already have taken effect); an expired key starts over.
    const attempt = row.expired ? 1 : Number(row.attempts) + 1;
    const startedAt = Number(row.expired ? row.now_ms : row.started_ms);
    if (row.expired) await session.run(this.sql.purgeSteps, [input.scope, input.key]);
    const [header] = await session.run<ResultSetHeader>(this.sql.takeover, [
      input.action,
      input.fingerprint,
      input.algorithm,
      token,
      attempt,
      lease,
      startedAt,
      retention,
      input.scope,
      input.key,
      input.fingerprint,
      input.algorithm,
    ]);
    if (header.affectedRows !== 1) throw new StoreUnavailableError('claim');
    const reclaimed = row.expired
      ? ('expired' as const)
      : row.released
        ? ('released' as const)
        : ('orphan' as const);
    return { outcome: 'claimed' as const, ref, reclaimed, attempt, startedAt };
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const [rows] = await this.query<RecordRow[]>('read', this.sql.read, [scope, key]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const values = completeValues(ref, status, response, retentionMs);
    const [header] = await this.query<ResultSetHeader>('complete', this.sql.complete, values);
    return header.affectedRows === 1;
  }

  async release(ref: ClaimRef): Promise<boolean> {
    const values = [ref.scope, ref.key, ref.token];
    return (await this.query<ResultSetHeader>('release', this.sql.release, values))[0].affectedRows === 1;
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    const values = [Math.round(leaseMs * 1000), ref.scope, ref.key, ref.token];
    return (await this.query<ResultSetHeader>('extend', this.sql.extend, values))[0].affectedRows === 1;
  }

  /** Saga steps: in transactional mode they are written on the claim's open transaction (`db`). */
  async loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>> {
    const [rows] = await this.onClaim<RowDataPacket[]>(claim, this.sql.loadSteps, [claim.scope, claim.key]);
    return new Map(
      rows.map((row) => [
        Number(row.step_index),
        { index: Number(row.step_index), status: row.status, result: parseJson(row.result) },
      ]),
    );
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
    const [header] = await this.onClaim<ResultSetHeader>(claim, this.sql.recordStep, [
      ...values,
      claim.scope,
      claim.key,
      claim.token,
    ]);
    if (header.affectedRows === 0) throw new LeaseLostError();
  }

  private async onClaim<R extends ResultSetHeader | RowDataPacket[]>(
    claim: ClaimRef,
    sql: string,
    values: unknown[],
  ): Promise<[R, unknown]> {
    const db = (claim as { db?: unknown }).db as PoolConnection | undefined;
    if (!db) return this.query<R>('saga', sql, values);
    return bounded('saga', db.query<R>(sql, values), this.options.timeoutMs);
  }

  /** A pooled connection within acquireTimeoutMs (failing here is provably "not processed": nothing was sent). */
  private async session(operation: string): Promise<Session> {
    const pending = this.options.pool.getConnection();
    const acquireMs = this.options.acquireTimeoutMs ?? this.options.timeoutMs;
    try {
      return new Session(await bounded(operation, pending, acquireMs), this.options.timeoutMs);
    } catch (error) {
      pending.then(
        (late) => late.release(),
        () => undefined,
      );
      throw wrap(operation, error);
    }
  }

  /** One autocommit statement for the fenced writes: a late commit of any of them is harmless, the token decides. */
  private async query<R extends ResultSetHeader | RowDataPacket[]>(
    operation: string,
    sql: string,
    values: unknown[],
  ): Promise<[R, unknown]> {
    const session = await this.session(operation);
    try {
      const result = await session.run<R>(sql, values);
      session.done();
      return result;
    } catch (error) {
      await session.fail(error);
      throw wrap(operation, error);
    }
  }
}

/** One checked-out connection; ends with done(), end() or fail(). */
class Session {
  private released = false;

  constructor(
    readonly connection: PoolConnection,
    private readonly timeoutMs: number,
  ) {}

  /** `extraMs`: a statement that may wait on a row lock gets the server's lock wait on top of its own budget. */
  run<R extends ResultSetHeader | RowDataPacket[]>(
    sql: string,
    values?: unknown[],
    extraMs = 0,
  ): Promise<[R, unknown]> {
    return bounded('statement', this.connection.query<R>(sql, values), this.timeoutMs + extraMs);
  }

  done(): void {
    if (this.released) return;
    this.released = true;
    try {
      this.connection.release();
    } catch {
      // already released by the handler
    }
  }

  async end(statement: 'ROLLBACK'): Promise<void> {
    try {
      await this.run(statement);
      this.done();
    } catch (error) {
      this.destroy();
      void error;
    }
  }

  /** A server-reported error leaves a healthy connection (roll back and reuse); anything else destroys it. */
  async fail(error: unknown): Promise<void> {
    if (this.released) return;
    if (isServerError(error)) await this.end('ROLLBACK');
    else this.destroy();
  }

  /** A destroyed connection takes its open transaction with it: the server rolls it back. */
  private destroy(): void {
    if (this.released) return;
    this.released = true;
    try {
      this.connection.destroy();
    } catch {
      // already gone
    }
  }
}

async function bounded<T>(operation: string, work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // setImmediate: an answer already waiting on the socket wins over a timer that fires in the same turn.
    timer = setTimeout(
      () => setImmediate(() => reject(new StoreUnavailableError(operation))),
      Math.max(1, ms),
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function wrap(operation: string, error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof LeaseLostError) return error;
  return new StoreUnavailableError(operation, { cause: error });
}

/** MySQL answered with an error of its own (not a lost connection): the connection is fine. */
function isServerError(error: unknown): boolean {
  const e = error as { errno?: unknown; fatal?: unknown };
  return typeof e?.errno === 'number' && e.fatal !== true && !(error instanceof StoreUnavailableError);
}

/** ER_LOCK_WAIT_TIMEOUT: a concurrent duplicate still holds the key's row lock. */
const isLockWaitTimeout = (error: unknown) => (error as { errno?: unknown })?.errno === 1205;
/** ER_LOCK_DEADLOCK: InnoDB rolled this transaction back to break a cycle. */
const isDeadlock = (error: unknown) => (error as { errno?: unknown })?.errno === 1213;

/** A duplicate still holds the key's row lock (its transaction is open): answer as for a live claim. */
function busy(input: ClaimInput): ExistingRecord {
  return {
    status: 'PROCESSING',
    fingerprint: input.fingerprint,
    algorithm: input.algorithm,
    leaseLive: true,
    leaseRemainingMs: input.leaseMs,
  };
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
    Math.round(retentionMs * 1000),
    ref.scope,
    ref.key,
    ref.token,
  ];
}

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  return JSON.parse(value) as unknown;
}

function toRecord(row: RecordRow): ExistingRecord {
  const response: StoredResponse | undefined =
    row.response_status === null
      ? undefined
      : {
          status: row.response_status,
          headers: (parseJson(row.response_headers) ?? {}) as Record<string, string>,
          body: row.response_body ?? Buffer.alloc(0),
        };
  return {
    status: row.status,
    fingerprint: row.fingerprint,
    algorithm: row.fingerprint_alg,
    leaseLive: Number(row.lease_live) === 1,
    leaseRemainingMs: Number(row.lease_remaining_ms ?? 0),
    response,
    notReplayable: row.response_body === null && typeof row.response_hash === 'string',
  };
}
