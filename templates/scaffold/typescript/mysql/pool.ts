import mysql from 'mysql2/promise';

export interface PoolLimits {
  /** Longest wait for a connection from the pool, including opening a new one. */
  readonly acquireTimeoutMs: number;
  /** The client-side wait for each store statement (the store bounds every call itself). */
  readonly statementTimeoutMs: number;
}

/**
 * A mysql2 pool for the store (pass POLICY). Opening a connection is bounded by acquireTimeoutMs; the store bounds
 * the wait for a pooled one and every statement itself. Timestamps are written by the server (UTC_TIMESTAMP), so
 * the session time zone only matters for your own queries.
 */
export function createPool(connectionString: string, limits: PoolLimits | number, max = 10): mysql.Pool {
  const acquireTimeoutMs = typeof limits === 'number' ? limits : limits.acquireTimeoutMs;
  return mysql.createPool({
    uri: connectionString,
    connectionLimit: max,
    connectTimeout: acquireTimeoutMs,
    waitForConnections: true,
    enableKeepAlive: true,
    timezone: 'Z',
  });
}
