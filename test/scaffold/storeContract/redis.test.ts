import { afterAll, describe, it } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';
import { REDIS_URL, redisSkipReason, throwaway } from './services.js';

const skip = await redisSkipReason();
if (skip) {
  console.warn(`store contract against Redis skipped: ${skip}`);
  describe.skip('store contract: Redis', () => it('needs Redis', () => undefined));
} else {
  const scaffold = await materializeStore('redis');
  afterAll(() => scaffold.remove());
  const { RedisIdempotencyStore } = await scaffold.load('redisStore');
  const { createPool } = await scaffold.load('pool');
  // No cleanup hook: Redis expires records by their TTL, and the contract checks that they go.
  await runStoreContract(scaffold, 'Redis (ioredis)', async () => {
    const prefix = throwaway('contract');
    const client = createPool(REDIS_URL, { acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 });
    const down = createPool('redis://127.0.0.1:1', { acquireTimeoutMs: 300, statementTimeoutMs: 300 });
    return {
      store: new RedisIdempotencyStore({ client, prefix, timeoutMs: 5_000 }),
      unavailable: async () => new RedisIdempotencyStore({ client: down, prefix, timeoutMs: 300 }),
      close: async () => {
        let cursor = '0';
        do {
          const [next, keys] = (await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500)) as [string, string[]];
          if (keys.length > 0) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
        client.disconnect();
        down.disconnect();
      },
    };
  });
}
