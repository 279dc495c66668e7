import { Redis } from 'ioredis';

export interface PoolLimits {
  /** Longest wait for the connection to open. */
  readonly acquireTimeoutMs: number;
  /** The store bounds every command by this too; ioredis gives up on a command after it. */
  readonly statementTimeoutMs: number;
}

/**
 * An ioredis client for the store (pass POLICY). Named createPool like the other stores' helpers: ioredis
 * multiplexes one connection. Use a Cluster client instead if you run Redis Cluster: every key of one record
 * shares a hash tag, so each script touches one slot.
 */
export function createPool(url: string, limits: PoolLimits | number): Redis {
  const { acquireTimeoutMs, statementTimeoutMs } =
    typeof limits === 'number' ? { acquireTimeoutMs: limits, statementTimeoutMs: limits } : limits;
  const client = new Redis(url, {
    connectTimeout: acquireTimeoutMs,
    commandTimeout: statementTimeoutMs,
    maxRetriesPerRequest: 1,
  });
  // A dropped connection is reported here and retried by ioredis; requests meanwhile fail closed with 503.
  client.on('error', () => undefined);
  return client;
}
