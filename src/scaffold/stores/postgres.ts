import { renderCleanupJob } from '../renderCleanupJob.js';
import { renderMigration } from '../renderMigration.js';
import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { POSTGRES_STORE_FILES } from '../typescriptRuntime.js';
import { renderContractTest } from './renderContractTest.js';
import type { StoreModule } from './types.js';

export const POSTGRES_MIGRATION = 'migrations/001_create_idempotency_store.sql';

// The crash scenario differs by mode: a lapsed lease and a fenced late write, or a rolled-back transaction.
const CRASH_TRANSACTIONAL = `  it('crash mid-transaction: duplicates wait or get 409, the open transaction rolls back, the retry runs once', async () => {
    const core = new IdempotencyCore(
      new PgIdempotencyStore({
        pool,
        table: POLICY.table,
        stepTable: POLICY.stepTable,
        timeoutMs: POLICY.statementTimeoutMs,
        lockTimeoutMs: POLICY.lockTimeoutMs,
      }),
      { ...POLICY, inFlight: 'reject' },
    );
    const { claim: dead } = await claimLike(core, 'crash');
    await recordEffect(dead.context);
    expect((await send('crash')).status).toBe(409);
    // The worker dies: its connection goes, and PostgreSQL rolls back the claim and the effect together.
    (dead.context.db as pg.PoolClient).release(new Error('worker crashed'));
    const before = executions;
    const retry = await send('crash');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
    expect(await effects('crash')).toBe(1);
    await expect(
      dead.complete({ status: 200, headers: {}, body: Buffer.from('late') }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    const replay = await send('crash');
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
  });

`;

const CRASH_LEASE = `  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = new IdempotencyCore(
      new PgIdempotencyStore({
        pool,
        table: POLICY.table,
        stepTable: POLICY.stepTable,
        timeoutMs: POLICY.storeTimeoutMs,
      }),
      { ...POLICY, inFlight: 'reject' },
    );
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    await pool.query(
      \`UPDATE \${POLICY.table} SET locked_until = now() - interval '1 second' WHERE scope = $1 AND key = $2\`,
      [scope, key],
    );
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

/** PostgreSQL through pg: the reference store (one-statement claim, SET LOCAL time-outs, SKIP LOCKED cleanup). */
export const POSTGRES_STORE: StoreModule = {
  id: 'postgres',
  label: 'PostgreSQL',
  serves: ['postgres'],
  files: POSTGRES_STORE_FILES,
  migration: { path: POSTGRES_MIGRATION, purpose: 'the store table, partial indexes and saga step table', render: renderMigration },
  cleanupJob: (view, javascript) => renderCleanupJob(view, undefined, undefined, javascript),
  transactional: true,
  dependencies: { runtime: ['pg'], dev: ['@types/pg'] },
  wiring: {
    poolImport: `import type { Pool } from 'pg';`,
    imports: `import { PgIdempotencyStore } from './pgStore.js';
import { SagaTracker } from './saga.js';`,
    exports: `export { PgIdempotencyStore } from './pgStore.js';
export { createPool, type PoolLimits } from './pool.js';
export {
  PermanentStepError,
  SagaCompensatedError,
  SagaTracker,
  type SagaStep,
  type StepContext,
} from './saga.js';
export { deleteExpiredKeys } from './cleanup.js';`,
    poolType: 'Pool',
    poolDoc: '',
    build: `  const store = new PgIdempotencyStore({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.statementTimeoutMs,
    acquireTimeoutMs: POLICY.acquireTimeoutMs,
    lockTimeoutMs: POLICY.lockTimeoutMs,
  });`,
    saga: `  const saga = new SagaTracker({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.storeTimeoutMs,
  });`,
  },
  readme: {
    migrationStep: `Apply \`migrations/001_create_idempotency_store.sql\` with your migration tool. It is safe to re-run: a store
   created by an earlier version gains its new columns (\`attempts\`, \`response_hash\`) from its ALTER TABLE lines.`,
    limits: (view: ScaffoldView) => `- Store down or slow before the action: 503 "not processed" with Retry-After. That is provably true: waiting for a
  connection stops after ${view.policy.acquireTimeoutMs} ms, each statement after ${view.policy.statementTimeoutMs} ms (\`statement_timeout\`,
  and \`lock_timeout\` ${view.policy.lockTimeoutMs} ms behind a concurrent duplicate, session parameters of the pool's connections; the client
  waits one second more for the server's answer), and a lease claim that reaches the database more than half a second after it
  was sent takes nothing (transactional mode: nothing is durable before COMMIT), so a claim the client was told failed can
  never commit later.
- Cost on the store: every request starts with one plain read (no lock, no commit), which alone answers replays,
  conflicts and in-flight duplicates; a new key adds the claim (lease: one autocommit statement; transactional: BEGIN,
  claim, and one COMMIT shared with the handler's writes). The one-statement lease claim needs the session limits
  \`createPool()\` sets; a pool made elsewhere gets the claim wrapped in BEGIN, SET LOCAL time-outs and COMMIT.`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel}; run \`cleanup-job.js\` on the schedule \`${view.cleanupSchedule}\` (${view.cleanupScheduleLabel}); it prints
  \`${view.metricNames.cleanupDeleted}\` and pushes it when PUSHGATEWAY_URL is set.`,
    storeSample: "`observeStore(pgStoreSample(pool))` (`pgStoreSample.ts`: the planner's row estimate, no table scan, and the age of the\noldest `PROCESSING` claim, which a partial index answers).",
    tests: (command: string) => `\`DATABASE_URL=postgres://... ${command}\` creates a temporary schema, runs the scenarios
against it and drops it. Without DATABASE_URL the suites are skipped with a message.`,
  },
  tests: {
    fsImport: `import { readFileSync } from 'node:fs';\n`,
    driverImport: `import pg from 'pg';`,
    storeImport: `import { PgIdempotencyStore } from './pgStore.js';`,
    gate: `const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'idempotency tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in',
  );`,
    skipIf: '!DATABASE_URL',
    declarations: `  const schema = \`idem_test_\${randomBytes(6).toString('hex')}\`;
  let admin: pg.Pool;
  let pool: pg.Pool;`,
    setup: (migration: string) => `    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(\`CREATE SCHEMA \${schema}\`);
    pool = new pg.Pool({ connectionString: DATABASE_URL, options: \`-c search_path=\${schema}\`, max: 20 });
    await ${houseExpression(`pool.query(readFileSync(${migration}, 'utf8'))`, '    ', '    await '.length, 1)};
    // Stands in for the action's own table: one row per execution, written the way the action's mode prescribes.
    await pool.query('CREATE TABLE test_effects (scope text NOT NULL, key text NOT NULL)');`,
    teardown: `    await pool?.end();
    await admin?.query(\`DROP SCHEMA IF EXISTS \${schema} CASCADE\`);
    await admin?.end();`,
    effectHelpers: `  /**
   * The handler's effect. Transactional mode: written through the transaction the handler is given, so it commits
   * or rolls back with the claim. Lease mode: written on its own, like a call to another service.
   */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    const db = ACTION.mode === 'transactional' ? (context.db as pg.PoolClient) : pool;
    await db.query('INSERT INTO test_effects (scope, key) VALUES ($1, $2)', [context.scope, context.key]);
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    const { rows } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM test_effects WHERE scope = $1 AND key = $2',
      [scope, key],
    );
    return Number(rows[0]?.n ?? 0);
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // Derived keys are hashes; the newest record is the one this test just wrote (tests in a file run in order).
    const { rows } = await pool.query<{ scope: string; key: string }>(
      \`SELECT scope, key FROM \${POLICY.table} ORDER BY created_at DESC\`,
    );
    const found = USES_HEADER ? rows.find((row) => row.key === \`key-\${id}\`) : rows[0];
    if (!found) throw new Error('record not found');
    return found;
  }`,
    assertFinished: `    const { rows } = await pool.query(
      \`SELECT status, response_status FROM \${POLICY.table} WHERE status <> 'PROCESSING'\`,
    );
    expect(rows.length).toBeGreaterThan(0);`,
    expireRecord: `    await pool.query(
      \`UPDATE \${POLICY.table} SET expires_at = now() - interval '1 second' WHERE scope = $1 AND key = $2\`,
      [scope, key],
    );`,
    crashTransactional: CRASH_TRANSACTIONAL,
    crashLease: CRASH_LEASE,
    newStore: (timeoutMs: string) => `new PgIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: ${timeoutMs} })`,
    newSaga: `new SagaTracker({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: POLICY.storeTimeoutMs })`,
    assertStillProcessing: `    const { rows } = await pool.query(
      \`SELECT status, locked_until > now() AS live FROM \${POLICY.table} WHERE key = $1\`,
      [key],
    );
    expect(rows).toEqual([{ status: 'PROCESSING', live: true }]);`,
  },
  renderContractTest: (view) => renderContractTest(view, POSTGRES_CONTRACT),
};

const POSTGRES_CONTRACT = {
  imports: `import { readFileSync } from 'node:fs';
import { URL } from 'node:url';
import pg from 'pg';
import { deleteExpiredKeys } from './cleanup.js';
import { PgIdempotencyStore } from './pgStore.js';
import { createPool } from './pool.js';
import { POLICY } from './settings.js';`,
  gate: `const STORE_NAME = 'PostgreSQL store';
const DATABASE_URL = process.env.DATABASE_URL;
const RUN = DATABASE_URL !== undefined;
if (!RUN)
  console.warn(
    'store contract skipped: set DATABASE_URL to a PostgreSQL database where it may create a schema',
  );`,
  open: `    const schema = throwaway();
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(\`CREATE SCHEMA \${schema}\`);
    const url = new URL(DATABASE_URL!);
    url.searchParams.set('options', \`-c search_path=\${schema}\`);
    const pool = createPool(url.toString(), BOUNDS, 20);
    await pool.query(
      readFileSync(new URL('./migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    const options = {
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: BOUNDS.statementTimeoutMs,
      acquireTimeoutMs: BOUNDS.acquireTimeoutMs,
      lockTimeoutMs: BOUNDS.lockTimeoutMs,
    };
    // Nothing listens on port 1: every call must fail closed within its time-out.
    const dead = createPool('postgres://nobody@127.0.0.1:1/none', {
      acquireTimeoutMs: 500,
      statementTimeoutMs: 500,
    });
    return {
      store: new PgIdempotencyStore({ pool, ...options }),
      unavailable: async () =>
        new PgIdempotencyStore({ pool: dead, ...options, timeoutMs: 500, acquireTimeoutMs: 500 }),
      cleanup: async () => (await deleteExpiredKeys({ pool, table: POLICY.table, batchSize: 10 })).deleted,
      close: async () => {
        await pool.end();
        await dead.end();
        await admin.query(\`DROP SCHEMA IF EXISTS \${schema} CASCADE\`);
        await admin.end();
      },
    };`,
};
