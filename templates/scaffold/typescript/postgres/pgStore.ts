import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import {
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
  type StuckRecord,
  type TransactionClaimResult,
} from './types.js';

export interface PgStoreOptions {
  readonly pool: Pool;
  readonly table: string;
  readonly stepTable: string;
  /** Server-side statement_timeout for each store statement (and the client-side bound on it). */
  readonly timeoutMs: number;
  /** Longest wait for a pooled connection, counted separately; default timeoutMs. */
  readonly acquireTimeoutMs?: number;
  /** Server-side lock_timeout: how long a claim waits on a concurrent duplicate's uncommitted row; default timeoutMs / 2. */
  readonly lockTimeoutMs?: number;
  /**
   * The pool's connections carry statement_timeout (at most timeoutMs) and lock_timeout as session parameters, as
   * createPool() sets them: a lease claim is then one autocommit statement instead of BEGIN, claim, COMMIT.
   * Default: read from the pool's options.
   */
  readonly sessionLimits?: boolean;
}

interface RecordRow {
  status: RecordStatus;
  fingerprint: string;
  fingerprint_alg: string;
  lease_live: boolean;
  lease_remaining_ms: string | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: Buffer | null;
  response_hash: string | null;
}

interface ClaimRow extends Partial<RecordRow> {
  token: string | null;
  /** The record as it was decides the request without a claim: finished, under a live lease, or another fingerprint. */
  decided: boolean | null;
  attempts: number | null;
  /** The record's created_at (epoch ms): kept by a takeover, so the same on every attempt of the record. */
  started_ms: number | null;
  inserted: boolean | null;
  released: boolean | null;
  expired: boolean | null;
  /** The claim arrived after its deadline and took nothing (its sender may already have answered 503). */
  late: boolean;
  /** The database clock (epoch ms) while the statement ran. */
  db_ms: number;
}

interface LookupRow extends RecordRow {
  expired: boolean;
}

export const quoteIdent = (name: string) =>
  name
    .split('.')
    .map((part) => `"${part.replace(/"/g, '""')}"`)
    .join('.');

// What the caller needs to decide on an existing record, read in the same statement as the claim attempt.
const RECORD_COLUMNS = `status, fingerprint, fingerprint_alg,
  locked_until > now() AS lease_live,
  GREATEST(0, CEIL(EXTRACT(EPOCH FROM (locked_until - now())) * 1000))::bigint AS lease_remaining_ms,
  response_status, response_headers, response_body, response_hash`;

const DB_CLOCK = '(extract(epoch FROM clock_timestamp()) * 1000)::float8';

function claimStatement(t: string, steps: string, sequence: string, transactional: boolean): string {
  return `WITH gate AS (
  SELECT $8::float8 IS NULL OR ${DB_CLOCK} <= $8::float8 AS open
), previous AS (
  SELECT ${RECORD_COLUMNS}, released_at IS NOT NULL AS released, expires_at <= now() AS expired,
    expires_at > now() AND NOT (status = 'PROCESSING' AND locked_until <= now()
      AND fingerprint = $4::text AND fingerprint_alg = $5::text) AS decided
  FROM ${t} WHERE scope = $1 AND key = $2
), purged AS (
  DELETE FROM ${steps} WHERE scope = $1 AND key = $2
    AND EXISTS (SELECT 1 FROM previous WHERE expired) AND (SELECT open FROM gate)
), claimed AS (
  INSERT INTO ${t} AS t (scope, key, action, fingerprint, fingerprint_alg, status, fencing_token, attempts, locked_until, created_at, expires_at)
  SELECT $1, $2, $3::text, $4::text, $5::text, 'PROCESSING', nextval('${sequence.replace(/'/g, "''")}'), 1,
         now() + $6::float8 * interval '1 millisecond', now(), now() + $7::float8 * interval '1 millisecond'
  FROM gate WHERE gate.open AND NOT EXISTS (SELECT 1 FROM previous WHERE previous.decided)
  ON CONFLICT (scope, key) DO UPDATE SET
    action = EXCLUDED.action, fingerprint = EXCLUDED.fingerprint, fingerprint_alg = EXCLUDED.fingerprint_alg,
    status = 'PROCESSING', fencing_token = EXCLUDED.fencing_token, locked_until = EXCLUDED.locked_until,
    released_at = NULL, response_status = NULL, response_headers = NULL, response_body = NULL, response_hash = NULL,
    completed_at = NULL,
    -- A takeover counts as another attempt: the action may already have taken effect (provider keys stay the same).
    attempts = CASE WHEN t.expires_at <= now() THEN 1 ELSE t.attempts + 1 END,
    created_at = CASE WHEN t.expires_at <= now() THEN now() ELSE t.created_at END,
    expires_at = EXCLUDED.expires_at
  WHERE t.expires_at <= now()
     OR (t.status = 'PROCESSING' AND t.locked_until <= now()
         AND t.fingerprint = EXCLUDED.fingerprint AND t.fingerprint_alg = EXCLUDED.fingerprint_alg)
  RETURNING fencing_token::text AS token, (xmax = 0) AS inserted, attempts,
    floor(extract(epoch FROM created_at) * 1000)::float8 AS started_ms
)
SELECT c.token, c.inserted, c.attempts, c.started_ms, NOT g.open AS late, ${DB_CLOCK} AS db_ms, p.*${
    transactional ? ",\n  set_config('statement_timeout', $9::text, true) AS handler_budget" : ''
  }
FROM gate g LEFT JOIN claimed c ON true LEFT JOIN previous p ON true`;
}

function statements(table: string, stepTable: string) {
  const t = quoteIdent(table);
  const steps = quoteIdent(stepTable);
  const sequence = quoteIdent(`${table}_fencing_seq`);
  // Every write after the claim is fenced: it only lands while this token still owns the record. Completing twice
  // with the same token is allowed, so a completion whose answer was lost can be retried safely.
  const complete = `UPDATE ${t} SET status = $4, response_status = $5, response_headers = $6, response_body = $7,
  response_hash = $9, completed_at = now(), locked_until = NULL, expires_at = now() + $8 * interval '1 millisecond'
WHERE scope = $1 AND key = $2 AND fencing_token = $3 AND (status = 'PROCESSING' OR completed_at IS NOT NULL)`;
  return {
    // One statement decides everything. `previous` reads the record as it was (for replay / conflict answers);
    // when that record already decides the request (`decided`: finished, in flight under a live lease, or another
    // fingerprint) nothing is inserted, so no conflict arises and no row is locked or written: a replay or a 409 is
    // a plain read. Otherwise `claimed` inserts a new record, or atomically takes over one that expired, or reclaims
    // a lapsed lease for the same fingerprint with a fresh fencing token (CAS: the WHERE is re-checked on the latest
    // row version under its row lock, so two workers can never both reclaim). Record times come from the database
    // clock (now()). `gate` refuses a claim that reaches the server after $8 (epoch ms on the database clock, NULL
    // inside a transaction): an autocommit claim held up by the network must not take the key after its sender gave
    // up and answered 503.
    // The transactional variant also gives the handler's statements that follow the action's lease as budget.
    claim: claimStatement(t, steps, sequence, false),
    claimInTransaction: claimStatement(t, steps, sequence, true),
    // The first statement of a transactional request (and of a lease claim on a pool without session limits): a
    // plain read in autocommit (no lock, no write, no commit). A finished record is answered from it, without
    // opening a transaction; the claim runs only for a new, expired or lapsed key.
    lookup: `SELECT ${RECORD_COLUMNS}, expires_at <= now() AS expired FROM ${t} WHERE scope = $1 AND key = $2`,
    read: `SELECT ${RECORD_COLUMNS} FROM ${t} WHERE scope = $1 AND key = $2`,
    clock: `SELECT ${DB_CLOCK} AS db_ms`,
    complete,
    // Transactional mode sends COMMIT right behind the completion (one round trip), so a completion that updates
    // no row must fail the transaction itself: the division by zero makes PostgreSQL answer the COMMIT with ROLLBACK.
    completeInTransaction: `WITH done AS (${complete}
RETURNING 1)
SELECT 1 / count(*)::int AS completed FROM done`,
    release: `UPDATE ${t} SET locked_until = now(), released_at = now()
WHERE scope = $1 AND key = $2 AND fencing_token = $3 AND status = 'PROCESSING'`,
    extend: `UPDATE ${t} SET locked_until = now() + $4 * interval '1 millisecond'
WHERE scope = $1 AND key = $2 AND fencing_token = $3 AND status = 'PROCESSING' AND released_at IS NULL`,
  };
}

/** PostgreSQL implementation of the store on a pg Pool; see the migration for the table it expects. */
export class PgIdempotencyStore implements IdempotencyStore {
  private readonly sql: ReturnType<typeof statements>;
  private readonly prefix: string;
  private limits: boolean | undefined;
  private readonly clock = new DatabaseClock();
  private readonly statementMs: number;
  private readonly lockMs: number;

  constructor(private readonly options: PgStoreOptions) {
    this.sql = statements(options.table, options.stepTable);
    // Named statements are parsed once per connection; the name must change if the text does (another table).
    this.prefix = `idem_${createHash('sha256').update(`${options.table}\0${options.stepTable}`).digest('hex').slice(0, 12)}`;
    this.statementMs = Math.max(1, Math.round(options.timeoutMs));
    this.lockMs = Math.max(1, Math.round(options.lockTimeoutMs ?? options.timeoutMs / 2));
  }

  /**
   * Read from the pool on first use, not in the constructor: an app may hand over a pool that opens on its first
   * request (apply's instance.ts does, so that it reads the environment after the app has loaded it). Methods, not
   * getters: accessors do not compile for an ES3 target (TypeScript 3.x's default).
   */
  private sessionLimits(): boolean {
    if (this.limits === undefined)
      this.limits = this.options.sessionLimits ?? hasSessionLimits(this.options.pool, this.statementMs);
    return this.limits;
  }

  private beginStatement(): string {
    return this.sessionLimits()
      ? 'BEGIN'
      : `BEGIN; SET LOCAL statement_timeout = ${this.statementMs}; SET LOCAL lock_timeout = ${this.lockMs}`;
  }

  /**
   * Lease mode. With session limits on the pool the claim is the request's only store statement before the action:
   * one autocommit statement that answers a finished or in-flight record as a plain read, and otherwise claims, in
   * one round trip. Its `gate` refuses it if it reaches the server after its deadline (so a claim the client was
   * told failed cannot commit later). Without session limits a finished record is answered from the lookup alone,
   * and the claim runs in BEGIN, claim, COMMIT.
   */
  async claim(input: ClaimInput): Promise<ClaimResult> {
    const session = await this.session('claim');
    try {
      let result: ClaimOutcome;
      if (this.sessionLimits()) {
        // The deadline is on the database clock: the first claim of this store reads it once.
        if (!this.clock.isKnown()) {
          const { rows } = await session.run<{ db_ms: number }>('clock', this.sql.clock, [], true);
          this.clock.observe(Number(rows[0]?.db_ms));
        }
        result = await this.claimOn(session, input, 'claim', this.sql.claim, () => [
          ...claimValues(input),
          session.claimDeadline(),
        ]);
      } else {
        const existing = await this.lookup(session, input);
        if (existing) {
          session.done();
          return { outcome: 'existing', record: existing };
        }
        await session.begin(this.beginStatement());
        result = await this.claimOn(session, input, 'claim', this.sql.claim, () => [
          ...claimValues(input),
          null,
        ]);
        // Lost here, the claim may have committed but no action ran: "not processed" stays true, the lease lapses.
        await session.run('commit', 'COMMIT');
        session.inTransaction = false;
      }
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
      if (isLockTimeout(error)) return { outcome: 'existing', record: this.busy(input) };
      // statement_timeout (57014) and any other refusal: nothing was claimed, the caller fails closed.
      throw unavailable('claim', error);
    }
  }

  /**
   * Transactional mode: the claim runs in a transaction that stays open for the handler. Concurrent duplicates
   * wait on the key's unique index for at most lockTimeoutMs (then 409); when the owner commits they replay.
   * Round trips: the lookup; BEGIN with the claim (which also sets the handler's budget) in one; the handler's own
   * statements; the completion with COMMIT in one: one commit for the whole request.
   */
  async claimInTransaction(input: ClaimInput): Promise<TransactionClaimResult> {
    const session = await this.session('claim');
    let result: ClaimOutcome;
    try {
      const existing = await this.lookup(session, input);
      if (existing) {
        session.done();
        return { outcome: 'existing', record: existing };
      }
      // The handler's own statements may take as long as the action's lease, not the store's budget.
      const budget = Math.max(1, Math.round(input.leaseMs));
      result = await this.claimOn(
        session,
        input,
        'claim_tx',
        this.sql.claimInTransaction,
        () => [...claimValues(input), null, budget],
        this.beginStatement(),
      );
    } catch (error) {
      await session.fail(error);
      if (isLockTimeout(error)) return { outcome: 'existing', record: this.busy(input) };
      // statement_timeout (57014) and any other refusal: nothing was claimed, the caller fails closed.
      throw unavailable('claim', error);
    }
    if (result.outcome === 'existing') {
      await session.finish('ROLLBACK');
      return result;
    }
    const { ref } = result;
    const transaction: OpenTransaction = {
      ref,
      db: session.client,
      commit: async (status, response, retentionMs) => {
        // The completion and COMMIT go out together. The server allows the lease budget here (set for the
        // handler); the client still gives up after the store's.
        // A connection that already ended took its open transaction with it: nothing can commit, and nothing did.
        if (session.ended) {
          const error = new StoreUnavailableError('commit');
          await session.fail(error);
          throw error;
        }
        session.arm();
        let completed: Settled<QueryResult>;
        let committed: Settled<QueryResult>;
        try {
          [completed, committed] = await session.pair(
            {
              name: 'complete_tx',
              text: this.sql.completeInTransaction,
              values: completeValues(ref, status, response, retentionMs),
            },
            { text: 'COMMIT' },
          );
        } catch (error) {
          // No answer at all: the COMMIT was already sent, so it may or may not have committed.
          await session.fail(error);
          throw new OutcomeUnknownError({ cause: error });
        }
        if (committed.ok === false) {
          const error = committed.reason;
          const answered = isServerError(error);
          await session.fail(error);
          // The server refused the COMMIT: rolled back. No answer at all: it may or may not have committed.
          if (answered) throw new StoreUnavailableError('commit', { cause: error });
          throw new OutcomeUnknownError({ cause: error });
        }
        session.inTransaction = false;
        session.done();
        // The completion failed (or updated no row), so PostgreSQL answered the COMMIT with ROLLBACK: nothing was
        // committed, the claim and the action's writes are rolled back together.
        if (completed.ok === false) throw new StoreUnavailableError('complete', { cause: completed.reason });
        if (committed.value.command !== 'COMMIT') throw new StoreUnavailableError('complete');
      },
      rollback: () => session.finish('ROLLBACK'),
    };
    return { outcome: 'claimed', transaction, attempt: result.attempt, startedAt: result.startedAt };
  }

  /**
   * The plain read a transactional request starts with (and a lease claim on a pool without session limits).
   * Returns the record when it decides the request without a claim: finished and not expired (replay, mismatch,
   * not-replayable), or in flight under a live lease (409). A missing, expired or lapsed record returns undefined:
   * the claim decides.
   */
  private async lookup(session: Session, input: ClaimInput): Promise<ExistingRecord | undefined> {
    const { rows } = await session.run<LookupRow>('lookup', this.sql.lookup, [input.scope, input.key], true);
    const row = rows[0];
    if (!row?.status || row.expired) return undefined;
    if (row.status === 'PROCESSING' && !row.lease_live) return undefined;
    return toRecord(row);
  }

  private async claimOn(
    session: Session,
    input: ClaimInput,
    name: string,
    text: string,
    values: () => unknown[],
    begin?: string,
  ): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      // Each claim statement gets the full statement budget on the client, which its deadline is computed from.
      session.arm();
      const { rows } =
        begin !== undefined && attempt === 0
          ? await this.beginAndClaim(session, input, begin, { name, text, values: values() })
          : await session.run<ClaimRow>(name, text, values(), true);
      const row = rows[0];
      if (row) this.clock.observe(Number(row.db_ms));
      if (row?.token) {
        const reclaimed: 'no' | 'orphan' | 'released' | 'expired' = row.inserted
          ? 'no'
          : row.expired
            ? 'expired'
            : row.released
              ? 'released'
              : row.status
                ? 'orphan'
                : 'no';
        const ref: ClaimRef = { scope: input.scope, key: input.key, token: row.token, action: input.action };
        return {
          outcome: 'claimed' as const,
          ref,
          reclaimed,
          attempt: Number(row.attempts ?? 1),
          startedAt: Number(row.started_ms),
        };
      }
      if (row?.decided) return { outcome: 'existing' as const, record: toRecord(row as RecordRow) };
      // Arrived after its deadline (a slow network or a stalled server): nothing was taken, and since this answer
      // did arrive, a new attempt with a fresh deadline is safe.
      if (row?.late) continue;
      if (row?.status) return { outcome: 'existing' as const, record: toRecord(row as RecordRow) };
      // The conflicting row was committed after this statement's snapshot, so `previous` could not see it.
      const { rows: current } = await session.run<RecordRow>(
        'read',
        this.sql.read,
        [input.scope, input.key],
        true,
      );
      if (current[0]) return { outcome: 'existing' as const, record: toRecord(current[0]) };
      // ...and it was deleted again in between (cleanup of an expired row): simply try the claim again.
    }
    throw new StoreUnavailableError('claim');
  }

  /** BEGIN and the first claim of a transactional request in one round trip. */
  private async beginAndClaim(
    session: Session,
    input: ClaimInput,
    begin: string,
    claim: { name: string; text: string; values: unknown[] },
  ): Promise<QueryResult<ClaimRow>> {
    session.inTransaction = true;
    const [begun, claimed] = await session.pair<QueryResultRow, ClaimRow>({ text: begin }, claim);
    if (begun.ok === false) {
      // Never seen in practice, but then the claim ran on its own and committed: give the key straight back.
      session.inTransaction = false;
      const token = claimed.ok === true ? claimed.value.rows[0]?.token : undefined;
      if (token)
        await session
          .run('release', this.sql.release, [input.scope, input.key, token], true)
          .catch(() => undefined);
      throw begun.reason;
    }
    if (claimed.ok === false) throw claimed.reason;
    return claimed.value;
  }

  /** A duplicate still holds the key's row lock (its transaction is open): answer as for a live claim. */
  private busy(input: ClaimInput): ExistingRecord {
    return {
      status: 'PROCESSING',
      fingerprint: input.fingerprint,
      algorithm: input.algorithm,
      leaseLive: true,
      leaseRemainingMs: input.leaseMs,
    };
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const { rows } = await this.query<RecordRow>('read', this.sql.read, [scope, key]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    return (
      (await this.query('complete', this.sql.complete, completeValues(ref, status, response, retentionMs)))
        .rowCount === 1
    );
  }

  async release(ref: ClaimRef): Promise<boolean> {
    return (await this.query('release', this.sql.release, [ref.scope, ref.key, ref.token])).rowCount === 1;
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    return (
      (await this.query('extend', this.sql.extend, [ref.scope, ref.key, ref.token, leaseMs])).rowCount === 1
    );
  }

  /**
   * Reconciliation: PROCESSING records whose lease lapsed and that no owner gave back. Walks the partial index on
   * locked_until (in-flight records only), so it stays cheap however many finished records the table holds.
   */
  async listStuck(options: { readonly limit: number; readonly minStuckMs?: number }): Promise<StuckRecord[]> {
    const t = quoteIdent(this.options.table);
    const { rows } = await this.query<{
      scope: string;
      key: string;
      action: string;
      fingerprint: string;
      fingerprint_alg: string;
      attempts: number;
      stuck_ms: string;
    }>(
      'list_stuck',
      `SELECT scope, key, action, fingerprint, fingerprint_alg, attempts,
  FLOOR(EXTRACT(EPOCH FROM (now() - locked_until)) * 1000)::bigint AS stuck_ms
FROM ${t}
WHERE status = 'PROCESSING' AND released_at IS NULL AND expires_at > now()
  AND locked_until <= now() - $2 * interval '1 millisecond'
ORDER BY locked_until
LIMIT $1`,
      [Math.max(1, Math.floor(options.limit)), Math.max(0, options.minStuckMs ?? 0)],
    );
    return rows.map((row) => ({
      scope: row.scope,
      key: row.key,
      action: row.action,
      fingerprint: row.fingerprint.trim(),
      algorithm: row.fingerprint_alg,
      attempts: Number(row.attempts),
      stuckForMs: Number(row.stuck_ms),
    }));
  }

  /**
   * A pooled connection, acquired within acquireTimeoutMs (failing here is provably "not processed": nothing was
   * sent). Each statement is bounded on the client too; a connection whose statement timed out on the client side
   * is destroyed rather than reused, so an uncommitted transaction on it can only roll back.
   */
  private async session(operation: string): Promise<Session> {
    const acquireMs = this.options.acquireTimeoutMs ?? this.options.timeoutMs;
    const pending = this.options.pool.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    let client: PoolClient;
    try {
      client = await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new StoreUnavailableError(operation));
          }, acquireMs);
        }),
      ]);
    } catch (error) {
      if (timedOut)
        pending.then(
          (late) => late.release(),
          () => undefined,
        );
      throw unavailable(operation, error);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    return new Session(client, this.prefix, this.statementMs, this.clock);
  }

  /**
   * One autocommit statement for the fenced writes (complete, release, extend, read): a late commit of any of them
   * is harmless because the fencing token decides. Bounded by the acquisition and statement limits.
   */
  private async query<R extends QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<QueryResult<R>> {
    const session = await this.session(name);
    try {
      const result = await session.run<R>(name, text, values, true);
      session.done();
      return result;
    } catch (error) {
      await session.fail(error);
      throw unavailable(name, error);
    }
  }
}

/** One checked-out connection and the statements run on it; ends with done(), finish() or fail(). */
class Session {
  private released = false;
  private readonly ignore = (): void => undefined;
  /** The connection ended (the server or the app closed it): a statement sent now never reaches the server. */
  ended = false;
  private readonly onEnd = () => {
    this.ended = true;
  };
  /** When the current budget was armed, and when the client gives up on it (performance.now(): monotonic). */
  private armedAt = 0;
  private deadline = 0;
  /** BEGIN was sent and neither COMMIT nor ROLLBACK has answered: a failure must end the transaction. */
  inTransaction = false;

  constructor(
    readonly client: PoolClient,
    private readonly prefix: string,
    private readonly statementMs: number,
    private readonly clock: DatabaseClock,
  ) {
    // A connection lost while checked out emits 'error'; the failing statement reports it, the process must not die.
    client.on('error', this.ignore);
    client.once('end', this.onEnd);
    this.arm();
  }

  /**
   * Starts the client-side budget for the statements that follow (each claim statement and each completion gets
   * its own): the server cancels each statement at statement_timeout; the client gives up only after that plus a
   * second of network grace, i.e. on a silent connection, never before the server could answer.
   */
  arm(): void {
    this.armedAt = performance.now();
    this.deadline = this.armedAt + this.statementMs + CLIENT_GRACE_MS;
  }

  async begin(statement: string): Promise<void> {
    this.inTransaction = true;
    await this.run('begin', statement);
  }

  /**
   * The latest moment (epoch ms, database clock) an autocommit claim may reach the server: ARRIVAL_MS after the
   * budget was armed. Arriving by then, the server's statement_timeout (at most the budget) ends it before the
   * client gives up (budget + CLIENT_GRACE_MS); arriving later, its gate refuses it.
   */
  claimDeadline(): number {
    const deadline = this.clock.at(this.armedAt + ARRIVAL_MS);
    if (deadline === undefined) throw new StoreUnavailableError('claim');
    return deadline;
  }

  async run<R extends QueryResultRow = QueryResultRow>(
    name: string,
    text: string,
    values?: unknown[],
    prepared = false,
  ): Promise<QueryResult<R>> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      // setImmediate: on a busy event loop the timer can fire in the same turn in which the answer is already
      // waiting on the socket; letting I/O run first means only a really silent server counts as a time-out.
      timer = setTimeout(
        () => setImmediate(() => reject(new ClientTimeout(name))),
        Math.max(1, this.deadline - performance.now()),
      );
    });
    try {
      const query = prepared
        ? this.client.query<R>({ name: `${this.prefix}_${name}`, text, values })
        : this.client.query<R>(text, values);
      return await Promise.race([query, timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /**
   * Two statements in one round trip: both are written to the socket at once, before either answer is read
   * (node-postgres's pipeline mode, switched on for just these two; a pg without it runs them one after the other).
   * Both settle and the caller decides; a client-side time-out throws, and then either may have run.
   */
  async pair<A extends QueryResultRow = QueryResultRow, B extends QueryResultRow = QueryResultRow>(
    first: { name?: string; text: string; values?: unknown[] },
    second: { name?: string; text: string; values?: unknown[] },
  ): Promise<[Settled<QueryResult<A>>, Settled<QueryResult<B>>]> {
    // Typed on its own, not as PoolClient & {...}: newer @types/pg declare `readonly pipeline`, and TypeScript 3.x
    // keeps a property of an intersection read-only when any side says so.
    const wire = this.client as unknown as {
      pipeline?: boolean;
      connection?: { stream?: { cork?: () => void; uncork?: () => void } };
    };
    const pipelining = wire.pipeline === false;
    const stream = pipelining ? wire.connection?.stream : undefined;
    if (pipelining) wire.pipeline = true;
    stream?.cork?.();
    let both: Promise<[Settled<QueryResult<A>>, Settled<QueryResult<B>>]>;
    try {
      const send = <R extends QueryResultRow>(statement: {
        name?: string;
        text: string;
        values?: unknown[];
      }) =>
        statement.name === undefined
          ? this.client.query<R>(statement.text, statement.values)
          : this.client.query<R>({ ...statement, name: `${this.prefix}_${statement.name}` });
      both = pipelining
        ? Promise.all([settle(send<A>(first)), settle(send<B>(second))])
        : settle(send<A>(first)).then(
            async (a): Promise<[Settled<QueryResult<A>>, Settled<QueryResult<B>>]> => [
              a,
              await settle(send<B>(second)),
            ],
          );
    } finally {
      stream?.uncork?.();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => setImmediate(() => reject(new ClientTimeout(second.name ?? 'commit'))),
        Math.max(1, this.deadline - performance.now()),
      );
    });
    try {
      const settled = await Promise.race([both, timeout]);
      if (pipelining) wire.pipeline = false;
      return settled;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  done(): void {
    if (this.released) return;
    this.released = true;
    this.client.off('error', this.ignore);
    this.client.off('end', this.onEnd);
    releaseOnce(this.client);
  }

  /** Ends an open transaction: ROLLBACK (or COMMIT) if the connection answers, otherwise it is destroyed. */
  async finish(statement: 'ROLLBACK'): Promise<void> {
    this.arm();
    try {
      await this.run('end', statement);
      this.inTransaction = false;
      this.done();
    } catch (error) {
      this.destroy(error);
    }
  }

  /** After an error: a server-reported one leaves a healthy connection (roll back and reuse); anything else destroys it. */
  async fail(error: unknown): Promise<void> {
    if (this.released) return;
    if (!isServerError(error)) this.destroy(error);
    else if (this.inTransaction) await this.finish('ROLLBACK');
    else this.done();
  }

  private destroy(error: unknown): void {
    if (this.released) return;
    this.released = true;
    this.client.off('error', this.ignore);
    this.client.off('end', this.onEnd);
    // A destroyed connection takes its open transaction with it: the server rolls it back.
    releaseOnce(this.client, error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * The database clock as this process sees it: database time (epoch ms) minus performance.now(), learned from the
 * clock reading every claim answer carries. The local side is monotonic, so a step of this machine's wall clock
 * (NTP, a VM resume) never moves a claim's deadline, and nothing compares the two machines' wall clocks directly.
 * Each reading is a lower bound (the database read its clock before the answer arrived here), so the highest recent
 * one is the tightest; an estimate that is too low only makes a deadline earlier (the claim is refused as late and
 * retried with the fresh reading its refusal carried). The highest reading is trusted for OFFSET_TTL_MS, so a
 * database clock stepped back can widen the arrival window for at most that long.
 */
class DatabaseClock {
  private offsetMs: number | undefined;
  private observedAt = 0;

  /** A method, not a getter: accessors do not compile for an ES3 target. */
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

  /** The database time at local monotonic instant `localMs`; undefined before the first reading. */
  at(localMs: number): number | undefined {
    return this.offsetMs === undefined ? undefined : localMs + this.offsetMs;
  }
}

/** How long the tightest clock reading is trusted before a newer (possibly looser) one replaces it. */
const OFFSET_TTL_MS = 10_000;
/** How much longer than the server's statement_timeout the client waits for its answer. */
const CLIENT_GRACE_MS = 1_000;
/** How long after it was sent an autocommit claim may still reach the server; less than CLIENT_GRACE_MS. */
const ARRIVAL_MS = 500;

type ClaimOutcome =
  | {
      readonly outcome: 'claimed';
      readonly ref: ClaimRef;
      readonly reclaimed: 'no' | 'orphan' | 'released' | 'expired';
      readonly attempt: number;
      readonly startedAt: number;
    }
  | { readonly outcome: 'existing'; readonly record: ExistingRecord };

function claimValues(input: ClaimInput): unknown[] {
  return [
    input.scope,
    input.key,
    input.action,
    input.fingerprint,
    input.algorithm,
    input.leaseMs,
    input.retentionMs,
  ];
}

/**
 * createPool() gives every connection statement_timeout (within the store's budget) and lock_timeout as session
 * parameters; a pool made elsewhere without them gets the claim in a transaction with SET LOCAL instead.
 */
function hasSessionLimits(pool: Pool, statementMs: number): boolean {
  const options = (pool as { options?: { statement_timeout?: unknown; lock_timeout?: unknown } }).options;
  const statement = Number(options?.statement_timeout);
  const lock = Number(options?.lock_timeout);
  return statement > 0 && statement <= statementMs && lock > 0;
}

class ClientTimeout extends StoreUnavailableError {}

/** How a statement ended, without throwing (Promise.allSettled is ES2020; the scaffold also targets ES2019). */
type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value): Settled<T> => ({ ok: true, value }),
    (reason: unknown): Settled<T> => ({ ok: false, reason }),
  );
}

/** A handler that released the transaction's client itself (or a crash test) must not make the store throw here. */
function releaseOnce(client: PoolClient, error?: Error): void {
  try {
    client.release(error);
  } catch {
    // already released
  }
}

/** PostgreSQL answered with an error (it has a SQLSTATE): the connection itself is fine. */
function isServerError(error: unknown): boolean {
  return typeof (error as { code?: unknown })?.code === 'string' && !(error instanceof StoreUnavailableError);
}

function unavailable(operation: string, error: unknown): StoreUnavailableError {
  return error instanceof StoreUnavailableError
    ? error
    : new StoreUnavailableError(operation, { cause: error });
}

/** 55P03 lock_not_available: lock_timeout expired while waiting on a concurrent duplicate. */
function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '55P03';
}

function completeValues(
  ref: ClaimRef,
  status: string,
  response: StoredResponse,
  retentionMs: number,
): unknown[] {
  return [
    ref.scope,
    ref.key,
    ref.token,
    status,
    response.status,
    JSON.stringify(response.headers),
    response.bodySha256 === undefined ? response.body : null,
    retentionMs,
    response.bodySha256 ?? null,
  ];
}

function toRecord(row: RecordRow): ExistingRecord {
  const response: StoredResponse | undefined =
    row.response_status === null || row.response_status === undefined
      ? undefined
      : {
          status: row.response_status,
          headers: row.response_headers ?? {},
          body: row.response_body ?? Buffer.alloc(0),
        };
  return {
    status: row.status,
    fingerprint: row.fingerprint.trim(),
    algorithm: row.fingerprint_alg,
    leaseLive: row.lease_live === true,
    leaseRemainingMs: Number(row.lease_remaining_ms ?? 0),
    response,
    notReplayable: row.response_body === null && typeof row.response_hash === 'string',
  };
}
