import { createHash } from 'node:crypto';
import type { Pool, QueryResult, QueryResultRow } from 'pg';
import {
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyStore,
  type RecordStatus,
  type StoredResponse,
} from './types.js';

export interface PgStoreOptions {
  readonly pool: Pool;
  readonly table: string;
  readonly stepTable: string;
  /** Upper bound for every call, including waiting for a pooled connection. */
  readonly timeoutMs: number;
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
}

interface ClaimRow extends Partial<RecordRow> {
  token: string | null;
  inserted: boolean | null;
  released: boolean | null;
  expired: boolean | null;
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
  response_status, response_headers, response_body`;

function statements(table: string, stepTable: string) {
  const t = quoteIdent(table);
  const steps = quoteIdent(stepTable);
  const sequence = quoteIdent(`${table}_fencing_seq`);
  return {
    // One round trip decides everything. `previous` reads the record as it was (for replay / conflict answers);
    // `claimed` inserts a new record, or atomically takes over one that expired, or reclaims a lapsed lease for the
    // same fingerprint with a fresh fencing token (CAS: the WHERE is re-checked on the latest row version under
    // its row lock, so two workers can never both reclaim). All times come from the database clock.
    claim: `WITH previous AS (
  SELECT ${RECORD_COLUMNS}, released_at IS NOT NULL AS released, expires_at <= now() AS expired
  FROM ${t} WHERE scope = $1 AND key = $2
), purged AS (
  DELETE FROM ${steps} WHERE scope = $1 AND key = $2 AND EXISTS (SELECT 1 FROM previous WHERE expired)
), claimed AS (
  INSERT INTO ${t} AS t (scope, key, action, fingerprint, fingerprint_alg, status, fencing_token, locked_until, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, 'PROCESSING', nextval('${sequence.replace(/'/g, "''")}'),
          now() + $6 * interval '1 millisecond', now(), now() + $7 * interval '1 millisecond')
  ON CONFLICT (scope, key) DO UPDATE SET
    action = EXCLUDED.action, fingerprint = EXCLUDED.fingerprint, fingerprint_alg = EXCLUDED.fingerprint_alg,
    status = 'PROCESSING', fencing_token = EXCLUDED.fencing_token, locked_until = EXCLUDED.locked_until,
    released_at = NULL, response_status = NULL, response_headers = NULL, response_body = NULL, completed_at = NULL,
    created_at = CASE WHEN t.expires_at <= now() THEN now() ELSE t.created_at END,
    expires_at = EXCLUDED.expires_at
  WHERE t.expires_at <= now()
     OR (t.status = 'PROCESSING' AND t.locked_until <= now()
         AND t.fingerprint = EXCLUDED.fingerprint AND t.fingerprint_alg = EXCLUDED.fingerprint_alg)
  RETURNING fencing_token::text AS token, (xmax = 0) AS inserted
)
SELECT c.token, c.inserted, p.*
FROM (SELECT 1) AS one LEFT JOIN claimed c ON true LEFT JOIN previous p ON true`,
    read: `SELECT ${RECORD_COLUMNS} FROM ${t} WHERE scope = $1 AND key = $2`,
    // Every write after the claim is fenced: it only lands while this token still owns a PROCESSING record.
    complete: `UPDATE ${t} SET status = $4, response_status = $5, response_headers = $6, response_body = $7,
  completed_at = now(), locked_until = NULL, expires_at = now() + $8 * interval '1 millisecond'
WHERE scope = $1 AND key = $2 AND fencing_token = $3 AND status = 'PROCESSING'`,
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

  constructor(private readonly options: PgStoreOptions) {
    this.sql = statements(options.table, options.stepTable);
    // Named statements are parsed once per connection; the name must change if the text does (another table).
    this.prefix = `idem_${createHash('sha256').update(`${options.table}\0${options.stepTable}`).digest('hex').slice(0, 12)}`;
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const values = [
      input.scope,
      input.key,
      input.action,
      input.fingerprint,
      input.algorithm,
      input.leaseMs,
      input.retentionMs,
    ];
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await this.query<ClaimRow>('claim', this.sql.claim, values);
      const row = rows[0];
      if (row?.token) {
        const reclaimed = row.inserted
          ? 'no'
          : row.expired
            ? 'expired'
            : row.released
              ? 'released'
              : row.status
                ? 'orphan'
                : 'no';
        return {
          outcome: 'claimed',
          ref: { scope: input.scope, key: input.key, token: row.token },
          reclaimed,
        };
      }
      if (row?.status) return { outcome: 'existing', record: toRecord(row as RecordRow) };
      // The conflicting row was committed after this statement's snapshot, so `previous` could not see it.
      const record = await this.read(input.scope, input.key);
      if (record) return { outcome: 'existing', record };
      // ...and it was deleted again in between (cleanup of an expired row): simply try the claim again.
    }
    throw new StoreUnavailableError('claim');
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
    const values = [
      ref.scope,
      ref.key,
      ref.token,
      status,
      response.status,
      JSON.stringify(response.headers),
      response.body,
      retentionMs,
    ];
    return (await this.query('complete', this.sql.complete, values)).rowCount === 1;
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
   * Bounded: a pool whose connections hang (network partition, overloaded server) must not hang the request.
   * The race also covers waiting for a free pooled connection, which statement_timeout cannot.
   */
  private async query<R extends QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<QueryResult<R>> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(name)), this.options.timeoutMs);
    });
    try {
      return await Promise.race([
        this.options.pool.query<R>({ name: `${this.prefix}_${name}`, text, values }),
        timeout,
      ]);
    } catch (error) {
      throw error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError(name, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
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
  };
}
