import pg from 'pg';

export interface PoolLimits {
  /** Longest wait for a connection from the pool, including opening a new one. */
  readonly acquireTimeoutMs: number;
  /** statement_timeout on the server, and the client-side wait for each statement. */
  readonly statementTimeoutMs: number;
}

/**
 * A pool whose every wait is bounded, with connection acquisition and statements limited separately (pass POLICY):
 * a cold pool opening its first connections on a loaded host must not eat the statement budget. A number sets both.
 * Without these a stalled database makes requests hang instead of failing closed with 503.
 */
export function createPool(connectionString: string, limits: PoolLimits | number, max = 10): pg.Pool {
  const { acquireTimeoutMs, statementTimeoutMs } =
    typeof limits === 'number' ? { acquireTimeoutMs: limits, statementTimeoutMs: limits } : limits;
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: acquireTimeoutMs,
    // Server-side default for every statement on these connections. The store also sets it per transaction
    // (SET LOCAL) and bounds its own waits on the client; a transactional handler's statements get the action's
    // lease instead. No client-side query_timeout here: it would cut those handler statements short.
    statement_timeout: statementTimeoutMs,
    idleTimeoutMillis: 30_000,
  });
  // A pooled connection that dies while idle (database restart, failover, a cut network) is dropped by the pool and
  // reported here. Without a listener Node treats the event as unhandled and kills the process; with it, the next
  // request opens a new connection or, if the database is still away, fails closed with 503.
  pool.on('error', () => undefined);
  return pool;
}
