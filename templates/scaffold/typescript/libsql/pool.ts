import { createClient, type Client } from '@libsql/client';

export interface PoolLimits {
  /** Longest wait for a store call to be answered, including a wait for the database's write lock. */
  readonly acquireTimeoutMs: number;
  readonly statementTimeoutMs: number;
  /** Requests the client sends at once (POLICY.poolSize, or createPool's `max`); default 20, the client's own. */
  readonly poolSize?: number;
}

/**
 * A libSQL client for the store (pass POLICY): `libsql://` or `https://` for a remote database (Turso, sqld), or
 * `file:path` (or a plain path) for a local file in development and tests. A remote database needs its token:
 * `authToken`, by default DATABASE_AUTH_TOKEN. You can also hand the store your app's own client
 * (`createClient({ url, authToken })`).
 *
 * A local file has one writer at a time, and the client waits for its lock synchronously when a busy time-out is set,
 * which would block the event loop; it is left at 0 and the store waits for the lock asynchronously instead. Keep a
 * file to one writer (one process, no long write transactions of your own on it): with @libsql/client 0.18, a
 * connection whose statement met another connection's lock (SQLITE_BUSY) cannot commit a later write until that
 * statement is garbage-collected, so claims may fail closed (503) for a while. Several processes need a server.
 */
export function createPool(
  url: string,
  limits?: PoolLimits | number,
  max?: number,
  authToken: string | undefined = process.env['DATABASE_AUTH_TOKEN'],
): Client {
  const poolSize = max ?? (typeof limits === 'object' ? limits.poolSize : undefined);
  return createClient({
    // A plain path is a local file.
    url: /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `file:${url}`,
    ...(authToken ? { authToken } : {}),
    ...(poolSize ? { concurrency: poolSize } : {}),
  });
}
