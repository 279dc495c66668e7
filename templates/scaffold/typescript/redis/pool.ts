import IORedis from 'ioredis';

/**
 * ioredis's client class, reached the way every 5.x release exports it: as the default (ioredis 5.0 to 5.2 have no
 * named `Redis` export under Node's ES module loader). The default import is the class at run time and is typed as
 * the module, whose `default` is the class in both.
 */
export const Redis = IORedis.default;
/** A client of that class; a name of its own, since a JSDoc typedef in CommonJS JavaScript cannot share the class's. */
export type RedisClient = InstanceType<typeof Redis>;

export interface PoolLimits {
  /** Longest wait for the connection to open. */
  readonly acquireTimeoutMs: number;
  /** The store bounds every command by this too; ioredis gives up on a command after it. */
  readonly statementTimeoutMs: number;
}

/**
 * An ioredis client for the store (pass POLICY). Named createPool like the other stores' helpers: ioredis
 * multiplexes one connection. Use a Cluster client instead if you run Redis Cluster: every key of one record
 * shares a hash tag, so each script touches one slot. With `lazyConnect` the connection opens at the first command
 * instead of now: a process that never uses the client (an app's own tests on the memory store) opens none.
 */
export function createPool(
  url: string,
  limits: PoolLimits | number,
  options: { lazyConnect?: boolean } = {},
): RedisClient {
  const { acquireTimeoutMs, statementTimeoutMs } =
    typeof limits === 'number' ? { acquireTimeoutMs: limits, statementTimeoutMs: limits } : limits;
  const client = new Redis(url, {
    connectTimeout: acquireTimeoutMs,
    commandTimeout: statementTimeoutMs,
    maxRetriesPerRequest: 1,
    lazyConnect: options.lazyConnect === true,
  });
  // A dropped connection is reported here and retried by ioredis; requests meanwhile fail closed with 503.
  client.on('error', () => undefined);
  return client;
}
