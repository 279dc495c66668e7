import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { renderContractTest } from './renderContractTest.js';
import { SAGA_EXPORTS, SAGA_FILE } from './sagaFile.js';
import type { StoreModule } from './types.js';

const newStore = (timeoutMs: string) => `new RedisIdempotencyStore({ client: pool, prefix: POLICY.table, timeoutMs: ${timeoutMs} })`;

const CRASH = `  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = ${houseExpression(`new IdempotencyCore(${newStore('POLICY.storeTimeoutMs')}, { ...POLICY, inFlight: 'reject' })`, '    ', '    const core = '.length, 1)};
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    // The lease is a key with a TTL: removing it is what its expiry does.
    await pool.del(recordKeys(POLICY.table, scope, key)[1]);
    const before = executions;
    const retry = await send('crash');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
    await expect(
      dead.complete({ status: 200, headers: {}, body: Buffer.from('late') }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const replay = await send('crash');
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
  });

`;

/** Redis through ioredis: one Lua script per operation, lease as a key with PX, retention as the record's TTL. */
export const REDIS_STORE: StoreModule = {
  id: 'redis',
  label: 'Redis',
  serves: ['redis'],
  files: [
    { path: 'redisStore.ts', template: 'typescript/redis/redisStore.ts', role: 'store', purpose: 'Redis store: Lua claim and fenced writes, hash-tagged keys, TTL retention' },
    { path: 'pool.ts', template: 'typescript/redis/pool.ts', role: 'store', purpose: 'an ioredis client with bounded waits' },
    SAGA_FILE,
  ],
  transactional: false,
  dependencies: { runtime: ['ioredis'], dev: [] },
  wiring: {
    poolImport: `import type { Cluster } from 'ioredis';
import type { RedisClient } from './pool.js';`,
    imports: `import { RedisIdempotencyStore } from './redisStore.js';
import { SagaTracker } from './saga.js';`,
    exports: `export { RedisIdempotencyStore, recordKeys } from './redisStore.js';
export { createPool, type PoolLimits } from './pool.js';
${SAGA_EXPORTS}`,
    poolType: 'RedisClient | Cluster',
    poolDoc: '  /** An ioredis client or Cluster (createPool from ./pool.js). Redis runs every action in lease mode. */\n',
    build: `  const store = new RedisIdempotencyStore({
    client: setup.pool,
    prefix: POLICY.table,
    timeoutMs: POLICY.storeTimeoutMs,
  });`,
    saga: '  const saga = new SagaTracker({ steps: store });',
  },
  readme: {
    migrationStep: 'Nothing to migrate: records are Redis hashes under `<table>:{scope:key}` (one hash tag, so each record stays in one Cluster slot), created on first use. Every action runs in lease mode: Redis has no transaction to share with your own writes.',
    limits: (view: ScaffoldView) => `- Store down or slow before the action: 503 "not processed" with Retry-After after at most ${view.policy.storeTimeoutMs} ms per command. A claim
  that timed out on the client may still run on the server later; the store then releases it (fenced by its token),
  so a retry is not held off for a lease.`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel} by their Redis TTL (set on claim and on completion); there is no cleanup job.
  Run Redis with \`maxmemory-policy noeviction\` and persistence (AOF): an evicted or lost record is a key that runs
  again, and every record carries a TTL, so \`volatile-*\` policies evict them too.`,
    tests: (command: string) => `\`REDIS_URL=redis://host:6379 ${command}\` runs the scenarios and the store contract under a throwaway key prefix and deletes its keys afterwards. Without REDIS_URL the suites are skipped with a message.`,
  },
  tests: {
    fsImport: '',
    driverImport: `import { Redis, type RedisClient } from './pool.js';`,
    storeImport: `import { RedisIdempotencyStore, recordKeys } from './redisStore.js';`,
    gate: `const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL)
  console.warn(
    'idempotency tests skipped: set REDIS_URL to a Redis server where they may write keys under a throwaway prefix',
  );`,
    skipIf: '!REDIS_URL',
    declarations: `  const prefix = \`idem_test_\${randomBytes(6).toString('hex')}:\`;
  let pool: RedisClient;`,
    // ioredis applies keyPrefix to every key, the scripts' KEYS included: the suite never touches other keys.
    setup: () => `    pool = new Redis(REDIS_URL!, { keyPrefix: prefix });`,
    teardown: `    if (pool) {
      const admin = new Redis(REDIS_URL!);
      for (let cursor = '0'; ;) {
        const [next, keys] = await admin.scan(cursor, 'MATCH', \`\${prefix}*\`, 'COUNT', 500);
        if (keys.length > 0) await admin.del(...keys);
        cursor = next;
        if (cursor === '0') break;
      }
      admin.disconnect();
      pool.disconnect();
    }`,
    effectHelpers: `  /** The handler's effect, like a call to another service (Redis runs every action in lease mode): a counter per key. */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    await pool.incr(\`effects:\${context.scope}:\${context.key}\`);
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    return Number((await pool.get(\`effects:\${scope}:\${key}\`)) ?? 0);
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // The same key the middleware computes for this test id (derived keys are hashes of the body fields).
    const body = JSON.parse(JSON.stringify(SAMPLE.body).split('__ID__').join(id)) as unknown;
    const params = routeParams(ACTION.route, SAMPLE.url.split('__ID__').join(id));
    const key = USES_HEADER
      ? \`key-\${id}\`
      : deriveKey(ACTION.codeName, pickFields(ACTION.key.from ?? [], { params, body }));
    return { scope: ACTION.scope === 'global' ? 'global' : 'user-a', key };
  }`,
    assertFinished: `    const { scope, key } = await recordKey('first');
    expect(
      (
        await new RedisIdempotencyStore({
          client: pool,
          prefix: POLICY.table,
          timeoutMs: POLICY.storeTimeoutMs,
        }).read(scope, key)
      )?.status,
    ).toBe('COMPLETED');`,
    expireRecord: `    // Expiry in Redis is the TTL deleting the record's keys.
    await pool.del(...recordKeys(POLICY.table, scope, key));`,
    crashTransactional: CRASH,
    crashLease: CRASH,
    newStore,
    newSaga: `new SagaTracker({ steps: ${newStore('POLICY.storeTimeoutMs')} })`,
    assertStillProcessing: `    const record = await new RedisIdempotencyStore({
      client: pool,
      prefix: POLICY.table,
      timeoutMs: POLICY.storeTimeoutMs,
    }).read('user-a', key);
    expect(record && { status: record.status, live: record.leaseLive }).toEqual({
      status: 'PROCESSING',
      live: true,
    });`,
  },
  renderContractTest: (view) =>
    renderContractTest(view, {
      imports: `import { createPool, Redis } from './pool.js';
import { RedisIdempotencyStore } from './redisStore.js';
import { POLICY } from './settings.js';`,
      gate: `const STORE_NAME = 'Redis store';
const REDIS_URL = process.env.REDIS_URL;
const RUN = REDIS_URL !== undefined;
if (!RUN)
  console.warn(
    'store contract skipped: set REDIS_URL to a Redis server where it may write keys under a throwaway prefix',
  );`,
      // No cleanup hook: Redis expires records by their TTL, and the contract checks that they go.
      open: `    const prefix = throwaway();
    const client = createPool(REDIS_URL!, BOUNDS);
    // Nothing listens on port 1: every call must fail closed within its time-out.
    const dead = createPool('redis://127.0.0.1:1', { acquireTimeoutMs: 300, statementTimeoutMs: 300 });
    return {
      store: new RedisIdempotencyStore({ client, prefix, timeoutMs: BOUNDS.storeTimeoutMs }),
      unavailable: async () => new RedisIdempotencyStore({ client: dead, prefix, timeoutMs: 300 }),
      close: async () => {
        const admin = new Redis(REDIS_URL!);
        for (let cursor = '0'; ;) {
          const [next, keys] = await admin.scan(cursor, 'MATCH', \`\${prefix}:*\`, 'COUNT', 500);
          if (keys.length > 0) await admin.del(...keys);
          cursor = next;
          if (cursor === '0') break;
        }
        admin.disconnect();
        client.disconnect();
        dead.disconnect();
      },
    };`,
    }),
};
