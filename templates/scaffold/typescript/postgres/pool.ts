import pg from 'pg';

export interface PoolLimits {
  /** Longest wait for a connection from the pool, including opening a new one. */
  readonly acquireTimeoutMs: number;
  /** statement_timeout on the server, and the client-side wait for each statement. */
  readonly statementTimeoutMs: number;
  /** lock_timeout on the server: how long a claim waits on a concurrent duplicate; default statementTimeoutMs / 2. */
  readonly lockTimeoutMs?: number;
  /** Connections in the pool (POLICY.poolSize: the design sizes it from the expected concurrency); default 10. */
  readonly poolSize?: number;
}

/**
 * Where the database is, as parts: your project's own variables (DB_HOST, DB_PORT, …) instead of one URL. A part left
 * undefined falls back to pg's own PGHOST / PGPORT / PGUSER / PGPASSWORD / PGDATABASE.
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
 * A pool whose every wait is bounded, with connection acquisition and statements limited separately (pass POLICY):
 * a cold pool opening its first connections on a loaded host must not eat the statement budget. A number sets both.
 * Without these a stalled database makes requests hang instead of failing closed with 503.
 */
export function createPool(
  connection: string | ConnectionOptions,
  limits: PoolLimits | number,
  max?: number,
): pg.Pool {
  const { acquireTimeoutMs, statementTimeoutMs, lockTimeoutMs, poolSize }: PoolLimits =
    typeof limits === 'number' ? { acquireTimeoutMs: limits, statementTimeoutMs: limits } : limits;
  // Typed apart from the call: @types/pg before 8.10 does not declare lock_timeout, nor older ones allowExitOnIdle
  // (pg passes both on all the same).
  const config: pg.PoolConfig & { lock_timeout?: number; allowExitOnIdle?: boolean } = {
    ...(typeof connection === 'string' ? { connectionString: connection } : partsOf(connection)),
    max: max ?? poolSize ?? 10,
    connectionTimeoutMillis: acquireTimeoutMs,
    // Session parameters of every connection, sent in the start-up packet (no extra round trip): the server bounds
    // each statement and each lock wait, so the store's lease claim is one autocommit statement and needs no
    // BEGIN; SET LOCAL ...; COMMIT around it. A transactional handler's statements get the action's lease instead
    // (the claim sets it for its transaction). No client-side query_timeout here: it would cut those short.
    statement_timeout: statementTimeoutMs,
    lock_timeout: Math.max(1, Math.round(lockTimeoutMs ?? statementTimeoutMs / 2)),
    idleTimeoutMillis: 30_000,
    // Idle connections do not hold the process open (pg 8.7+; older releases ignore it): a test run or a script ends
    // when its work does, even if nothing calls closeIdempotency(). The pool refs a connection again before handing
    // it out, so a query in flight always keeps the process alive; a server's own listener keeps it up as before.
    allowExitOnIdle: true,
  };
  const pool = new pg.Pool(config);
  // A pooled connection that dies while idle (database restart, failover, a cut network) is dropped by the pool and
  // reported here. Without a listener Node treats the event as unhandled and kills the process; with it, the next
  // request opens a new connection or, if the database is still away, fails closed with 503.
  pool.on('error', () => undefined);
  return pool;
}

/** Only the parts that are set: an undefined one is left to pg's defaults, an empty or unparsable port too. */
function partsOf(connection: ConnectionOptions): pg.PoolConfig {
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
