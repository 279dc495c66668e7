import mysql from 'mysql2/promise';

export interface PoolLimits {
  /** Longest wait for a connection from the pool, including opening a new one. */
  readonly acquireTimeoutMs: number;
  /** The client-side wait for each store statement (the store bounds every call itself). */
  readonly statementTimeoutMs: number;
}

/**
 * Where the database is, as parts: your project's own variables (MYSQL_HOST, MYSQL_PORT, …) instead of one URL. A
 * part left undefined takes mysql2's default (localhost, 3306, no password).
 */
export interface ConnectionOptions {
  readonly host?: string | undefined;
  /** A number, or the text of one (an environment variable as it is). */
  readonly port?: number | string | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly database?: string | undefined;
}

/**
 * A mysql2 pool for the store (pass POLICY). Opening a connection is bounded by acquireTimeoutMs; the store bounds
 * the wait for a pooled one and every statement itself. Timestamps are written by the server (UTC_TIMESTAMP), so
 * the session time zone only matters for your own queries.
 */
export function createPool(
  connection: string | ConnectionOptions,
  limits: PoolLimits | number,
  max = 10,
): mysql.Pool {
  const acquireTimeoutMs = typeof limits === 'number' ? limits : limits.acquireTimeoutMs;
  const pool = mysql.createPool({
    ...(typeof connection === 'string' ? { uri: connection } : partsOf(connection)),
    connectionLimit: max,
    connectTimeout: acquireTimeoutMs,
    waitForConnections: true,
    enableKeepAlive: true,
    timezone: 'Z',
  });
  exitOnIdle(pool);
  return pool;
}

/** The core connection mysql2 passes to its pool's events (the promise pool forwards them as they are). */
type PooledSocket = { stream?: { ref?: () => unknown; unref?: () => unknown } };

/**
 * What pg's allowExitOnIdle does, for mysql2 (2.3 and 3.x): a connection the pool takes back ('release', emitted
 * only when it goes to the free list, not when it is handed straight to a waiting caller) stops holding the process
 * open, and one the pool hands out ('acquire', emitted before the caller gets it) holds it again before any statement
 * is sent. So a test run or a script ends when its work does, even if nothing calls closeIdempotency(), while a
 * query in flight always keeps the process alive; a server's own listener keeps it up as before.
 */
function exitOnIdle(pool: mysql.Pool): void {
  const events = pool as unknown as {
    on(event: string, listener: (connection: PooledSocket) => void): unknown;
  };
  events.on('release', (connection) => connection.stream?.unref?.());
  events.on('acquire', (connection) => connection.stream?.ref?.());
}

/** Only the parts that are set: an undefined one takes mysql2's default, an empty or unparsable port too. */
function partsOf(connection: ConnectionOptions): mysql.PoolOptions {
  const { host, port, user, password, database } = connection;
  const portNumber = port === undefined || port === '' ? Number.NaN : Number(port);
  return {
    ...(host ? { host } : {}),
    ...(Number.isInteger(portNumber) ? { port: portNumber } : {}),
    ...(user ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(database ? { database } : {}),
  };
}
