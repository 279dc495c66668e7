import pg from 'pg';

/**
 * A pool whose every wait is bounded: connecting, and each statement on the server and on the client. Without
 * these a stalled database makes requests hang instead of failing closed with 503.
 */
export function createPool(connectionString: string, timeoutMs: number, max = 10): pg.Pool {
  return new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 30_000,
  });
}
