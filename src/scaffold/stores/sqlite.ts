import { renderCleanupJob } from '../renderCleanupJob.js';
import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { renderContractTest } from './renderContractTest.js';
import { SAGA_EXPORTS, SAGA_FILE } from './sagaFile.js';
import { renderSqliteMigration } from './sqliteDdl.js';
import type { StoreModule } from './types.js';

const newStore = (timeoutMs: string) => `new SqliteIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: ${timeoutMs} })`;

/** SQLite through better-sqlite3, the embedded store: BEGIN IMMEDIATE (one writer) in WAL mode. */
export const SQLITE_STORE: StoreModule = {
  id: 'sqlite',
  label: 'SQLite',
  serves: ['sqlite'],
  files: [
    { path: 'sqliteStore.ts', template: 'typescript/sqlite/sqliteStore.ts', role: 'store', purpose: 'SQLite store: claims under BEGIN IMMEDIATE, fenced writes, bounded lock waits' },
    { path: 'pool.ts', template: 'typescript/sqlite/pool.ts', role: 'store', purpose: 'the database file in WAL mode and its connections' },
    SAGA_FILE,
    { path: 'cleanup.ts', template: 'typescript/sqlite/cleanup.ts', role: 'cleanup', purpose: 'batched deletion of expired records' },
  ],
  migration: { path: 'migrations/001_create_idempotency_store.sql', purpose: 'the store table, partial indexes and saga step table (STRICT tables)', render: renderSqliteMigration },
  cleanupJob: (view, javascript) => renderCleanupJob(view, 'sqlite:./data/app.db', 'overlapping runs are safe: each batch is its own write transaction', javascript),
  transactional: true,
  dependencies: { runtime: ['better-sqlite3'], dev: ['@types/better-sqlite3'] },
  wiring: {
    poolImport: `import type { SqlitePool } from './pool.js';`,
    imports: `import { SagaTracker } from './saga.js';
import { SqliteIdempotencyStore } from './sqliteStore.js';`,
    exports: `export { SqliteIdempotencyStore } from './sqliteStore.js';
export { SqlitePool, createPool, type PoolLimits } from './pool.js';
${SAGA_EXPORTS}
export { deleteExpiredKeys } from './cleanup.js';`,
    poolType: 'SqlitePool',
    poolDoc: '  /** The database file (createPool from ./pool.js); transactional handlers get a better-sqlite3 connection as `db`. */\n',
    build: `  const store = new SqliteIdempotencyStore({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.statementTimeoutMs,
    // SQLite has one writer: a claim may wait for another request's transaction, at most this long.
    lockTimeoutMs: POLICY.storeTimeoutMs,
  });`,
    saga: '  const saga = new SagaTracker({ steps: store });',
  },
  readme: {
    migrationStep: 'Apply `migrations/001_create_idempotency_store.sql` to the database file (`sqlite3 app.db < file`, or your migration tool). `createPool(path)` opens it in WAL mode; it must be a file, not `:memory:`.',
    limits: (view: ScaffoldView) => `- Store busy or gone before the action: 503 "not processed" with Retry-After. SQLite has one writer: a claim waits for
  the write lock (without blocking the event loop) at most ${view.policy.storeTimeoutMs} ms, then fails closed; a duplicate of a claim whose
  transaction is open in this process gets 409 at once. SQLite answers synchronously, so there is no late commit.
  One process (or one host sharing the file) only: for several instances use a server database.`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel}; run \`cleanup-job.js\` on the schedule \`${view.cleanupSchedule}\` (${view.cleanupScheduleLabel}); it prints
  \`${view.metricNames.cleanupDeleted}\` and pushes it when PUSHGATEWAY_URL is set.`,
    tests: (command: string) => `\`${command}\` runs the scenarios and the store contract on a throwaway database file in the temp folder; no server is needed.`,
  },
  tests: {
    fsImport: `import { mkdtempSync, readFileSync, rmSync } from 'node:fs';\nimport { tmpdir } from 'node:os';\nimport path from 'node:path';\n`,
    driverImport: `import type Database from 'better-sqlite3';`,
    storeImport: `import { createPool, type SqlitePool } from './pool.js';
import { NOW_MS, SqliteIdempotencyStore, quoteIdent } from './sqliteStore.js';`,
    gate: '// SQLite is embedded: the suite always runs, on a throwaway database file.',
    skipIf: 'false',
    declarations: `  const dir = mkdtempSync(path.join(tmpdir(), 'idem-test-'));
  let pool: SqlitePool;`,
    setup: (migration: string) => `    pool = createPool(path.join(dir, 'store.db'));
    ${houseExpression(`pool.db.exec(readFileSync(${migration}, 'utf8'))`, '    ', '    '.length, 1)};
    // Stands in for the action's own table: one row per execution, written the way the action's mode prescribes.
    pool.db.exec('CREATE TABLE test_effects (scope TEXT NOT NULL, key TEXT NOT NULL)');`,
    teardown: `    pool?.end();
    rmSync(dir, { recursive: true, force: true });`,
    effectHelpers: `  /**
   * The handler's effect. Transactional mode: written through the transaction the handler is given, so it commits
   * or rolls back with the claim. Lease mode: written on its own, like a call to another service.
   */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    const db = ACTION.mode === 'transactional' ? (context.db as Database.Database) : pool.db;
    db.prepare('INSERT INTO test_effects (scope, key) VALUES (?, ?)').run(context.scope, context.key);
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    const row = pool.db
      .prepare('SELECT count(*) AS n FROM test_effects WHERE scope = ? AND key = ?')
      .get(scope, key) as { n: number };
    return row.n;
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // Derived keys are hashes; the newest record is the one this test just wrote (tests in a file run in order).
    const rows = pool.db
      .prepare(\`SELECT scope, key FROM \${quoteIdent(POLICY.table)} ORDER BY created_at DESC, rowid DESC\`)
      .all() as Array<{ scope: string; key: string }>;
    const found = USES_HEADER ? rows.find((row) => row.key === \`key-\${id}\`) : rows[0];
    if (!found) throw new Error('record not found');
    return found;
  }`,
    assertFinished: `    const rows = pool.db
      .prepare(\`SELECT status FROM \${quoteIdent(POLICY.table)} WHERE status <> 'PROCESSING'\`)
      .all();
    expect(rows.length).toBeGreaterThan(0);`,
    expireRecord: `    pool.db
      .prepare(
        \`UPDATE \${quoteIdent(POLICY.table)} SET expires_at = \${NOW_MS} - 1000 WHERE scope = ? AND key = ?\`,
      )
      .run(scope, key);`,
    crashTransactional: `  it('crash mid-transaction: duplicates get 409, the open transaction rolls back, the retry runs once', async () => {
    const core = ${houseExpression(`new IdempotencyCore(${newStore('POLICY.statementTimeoutMs')}, { ...POLICY, inFlight: 'reject' })`, '    ', '    const core = '.length, 1)};
    const { claim: dead } = await claimLike(core, 'crash');
    await recordEffect(dead.context);
    expect((await send('crash')).status).toBe(409);
    // The worker dies: its connection closes, and SQLite rolls back the claim and the effect together.
    (dead.context.db as Database.Database).close();
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

`,
    crashLease: `  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = ${houseExpression(`new IdempotencyCore(${newStore('POLICY.storeTimeoutMs')}, { ...POLICY, inFlight: 'reject' })`, '    ', '    const core = '.length, 1)};
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    pool.db
      .prepare(
        \`UPDATE \${quoteIdent(POLICY.table)} SET locked_until = \${NOW_MS} - 1000 WHERE scope = ? AND key = ?\`,
      )
      .run(scope, key);
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

`,
    newStore,
    newSaga: `new SagaTracker({ steps: ${newStore('POLICY.storeTimeoutMs')} })`,
    assertStillProcessing: `    const rows = pool.db
      .prepare(
        \`SELECT status, locked_until > \${NOW_MS} AS live FROM \${quoteIdent(POLICY.table)} WHERE key = ?\`,
      )
      .all(key) as Array<{ status: string; live: number }>;
    expect(rows.map((row) => ({ status: row.status, live: row.live === 1 }))).toEqual([
      { status: 'PROCESSING', live: true },
    ]);`,
  },
  renderContractTest: (view) =>
    renderContractTest(view, {
      imports: `import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deleteExpiredKeys } from './cleanup.js';
import { createPool } from './pool.js';
import { POLICY } from './settings.js';
import { SqliteIdempotencyStore } from './sqliteStore.js';`,
      gate: `const STORE_NAME = 'SQLite store';
// Embedded: always runs, on a throwaway database file.
const RUN = true;`,
      open: `    const dir = mkdtempSync(path.join(tmpdir(), throwaway()));
    const pool = createPool(path.join(dir, 'store.db'));
    pool.db.exec(
      readFileSync(new URL('./migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    const options = { table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: BOUNDS.storeTimeoutMs };
    // A database whose connections are gone (its volume vanished, the app is shutting down).
    const dead = createPool(path.join(dir, 'closed.db'));
    dead.end();
    return {
      store: new SqliteIdempotencyStore({ pool, ...options }),
      unavailable: async () => new SqliteIdempotencyStore({ pool: dead, ...options, timeoutMs: 200 }),
      cleanup: async () => (await deleteExpiredKeys({ pool, table: POLICY.table, batchSize: 10 })).deleted,
      close: async () => {
        pool.end();
        rmSync(dir, { recursive: true, force: true });
      },
    };`,
    }),
};
