import { renderCleanupJob } from '../renderCleanupJob.js';
import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { renderContractTest } from './renderContractTest.js';
import { SAGA_EXPORTS, SAGA_FILE } from './sagaFile.js';
import { renderSqliteMigration } from './sqliteDdl.js';
import type { StoreModule } from './types.js';

const HEADER = `-- Idempotency store for libSQL (Turso, sqld, or a local file through @libsql/client). Apply once (turso db shell
-- <database> < file, or your migration tool). Times are integers (milliseconds since the epoch) written by the
-- database itself, so every instance of the app compares leases on the same clock, the database server's.`;

const newStore = (timeoutMs: string) => `new LibsqlIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: ${timeoutMs} })`;

const CRASH = `  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = ${houseExpression(`new IdempotencyCore(${newStore('POLICY.storeTimeoutMs')}, { ...POLICY, inFlight: 'reject' })`, '    ', '    const core = '.length, 1)};
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    await pool.execute({
      sql: \`UPDATE \${quoteIdent(POLICY.table)} SET locked_until = \${NOW_MS} - 1000 WHERE scope = ? AND key = ?\`,
      args: [scope, key],
    });
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

/**
 * libSQL through @libsql/client: a remote database (Turso, sqld) or a local file. The claim is one write batch;
 * lease mode only, since a transaction shared with the handler would hold the database's one write lock across it.
 */
export const LIBSQL_STORE: StoreModule = {
  id: 'libsql',
  label: 'libSQL (Turso)',
  testTarget: 'a local libSQL database file (the engine a Turso database runs)',
  serves: ['libsql'],
  files: [
    { path: 'libsqlStore.ts', template: 'typescript/libsql/libsqlStore.ts', role: 'store', purpose: 'libSQL store: the claim as one write batch, fenced writes, bounded calls' },
    { path: 'pool.ts', template: 'typescript/libsql/pool.ts', role: 'store', purpose: 'the libSQL client (remote URL and auth token, or a local file)' },
    SAGA_FILE,
    { path: 'cleanup.ts', template: 'typescript/libsql/cleanup.ts', role: 'cleanup', purpose: 'batched deletion of expired records and their saga steps' },
  ],
  migration: {
    path: 'migrations/001_create_idempotency_store.sql',
    purpose: 'the store table, partial indexes and saga step table (STRICT tables)',
    render: (view) => renderSqliteMigration(view, HEADER),
  },
  cleanupJob: (view, javascript) =>
    renderCleanupJob(view, 'libsql://your-db.turso.io', 'overlapping runs are safe: each batch is its own write batch', javascript, {
      stepTable: true,
      close: 'pool.close();',
    }),
  transactional: false,
  dependencies: { runtime: ['@libsql/client'], dev: [] },
  wiring: {
    poolImport: `import type { Client } from '@libsql/client';`,
    imports: `import { LibsqlIdempotencyStore } from './libsqlStore.js';
import { SagaTracker } from './saga.js';`,
    exports: `export { LibsqlIdempotencyStore } from './libsqlStore.js';
export { createPool, type PoolLimits } from './pool.js';
${SAGA_EXPORTS}
export { deleteExpiredKeys } from './cleanup.js';`,
    poolType: 'Client',
    poolDoc: "  /** A libSQL client (createPool from ./pool.js, or your app's own createClient()). libSQL runs every action in lease mode. */\n",
    build: `  const store = new LibsqlIdempotencyStore({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.storeTimeoutMs,
  });`,
    saga: '  const saga = new SagaTracker({ steps: store });',
  },
  readme: {
    leaseOnly:
      "the store keeps no transaction open across your handler, since one would hold the database's single write lock for the handler's whole run and stall every other write",
    migrationStep:
      'Apply `migrations/001_create_idempotency_store.sql` to the database (`turso db shell <database> < file`, or your migration tool). `createPool(url)` takes the `libsql://` URL and reads the token from DATABASE_AUTH_TOKEN; a `file:` URL opens a local file, for development and tests.',
    limits: (view: ScaffoldView) => `- Store down or slow before the action: 503 "not processed" with Retry-After. Each store call is one round trip
  answered within ${view.policy.storeTimeoutMs} ms or failed closed; a claim carries a deadline on the database clock, so one that reaches the
  server after the store gave up takes nothing, and one answered too late is released (fenced by its token).`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel}; run \`cleanup-job.js\` on the schedule \`${view.cleanupSchedule}\` (${view.cleanupScheduleLabel}); it prints
  \`${view.metricNames.cleanupDeleted}\` and pushes it when PUSHGATEWAY_URL is set.`,
    tests: (command: string) => `\`${command}\` runs the scenarios and the store contract on a throwaway local database file (\`file:\`) in the temp folder, through the same client and statements a remote database gets; no server is needed.`,
  },
  tests: {
    fsImport: `import { mkdtempSync, readFileSync, rmSync } from 'node:fs';\nimport { tmpdir } from 'node:os';\nimport path from 'node:path';\n`,
    driverImport: `import type { Client } from '@libsql/client';`,
    storeImport: `import { LibsqlIdempotencyStore, NOW_MS, quoteIdent } from './libsqlStore.js';
import { createPool } from './pool.js';`,
    gate: '// The suite runs on a throwaway local database file through @libsql/client: it always runs.',
    skipIf: 'false',
    declarations: `  const dir = mkdtempSync(path.join(tmpdir(), 'idem-test-'));
  let pool: Client;`,
    setup: (migration: string) => `    pool = createPool(\`file:\${path.join(dir, 'store.db')}\`);
    ${houseExpression(`await pool.executeMultiple(readFileSync(${migration}, 'utf8'))`, '    ', '    '.length, 1)};
    // Stands in for the action's own table: one row per execution, written on its own, like a call to another service.
    await pool.execute('CREATE TABLE test_effects (scope TEXT NOT NULL, key TEXT NOT NULL)');`,
    teardown: `    pool?.close();
    rmSync(dir, { recursive: true, force: true });`,
    effectHelpers: `  /** The handler's effect, written on its own (libSQL runs every action in lease mode). */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    await pool.execute({
      sql: 'INSERT INTO test_effects (scope, key) VALUES (?, ?)',
      args: [context.scope, context.key],
    });
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    const { rows } = await pool.execute({
      sql: 'SELECT count(*) AS n FROM test_effects WHERE scope = ? AND key = ?',
      args: [scope, key],
    });
    return Number(rows[0]?.n ?? 0);
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // Derived keys are hashes; the newest record is the one this test just wrote (tests in a file run in order).
    const { rows } = await pool.execute(
      \`SELECT scope, key FROM \${quoteIdent(POLICY.table)} ORDER BY created_at DESC, rowid DESC\`,
    );
    const found = USES_HEADER ? rows.find((row) => row.key === \`key-\${id}\`) : rows[0];
    if (!found) throw new Error('record not found');
    return { scope: String(found.scope), key: String(found.key) };
  }`,
    assertFinished: `    const { rows } = await pool.execute(
      \`SELECT status FROM \${quoteIdent(POLICY.table)} WHERE status <> 'PROCESSING'\`,
    );
    expect(rows.length).toBeGreaterThan(0);`,
    expireRecord: `    await pool.execute({
      sql: \`UPDATE \${quoteIdent(POLICY.table)} SET expires_at = \${NOW_MS} - 1000 WHERE scope = ? AND key = ?\`,
      args: [scope, key],
    });`,
    crashTransactional: CRASH,
    crashLease: CRASH,
    newStore,
    newSaga: `new SagaTracker({ steps: ${newStore('POLICY.storeTimeoutMs')} })`,
    assertStillProcessing: `    const { rows } = await pool.execute({
      sql: \`SELECT status, locked_until > \${NOW_MS} AS live FROM \${quoteIdent(POLICY.table)} WHERE key = ?\`,
      args: [key],
    });
    expect(rows.map((row) => ({ status: row.status, live: Number(row.live) === 1 }))).toEqual([
      { status: 'PROCESSING', live: true },
    ]);`,
  },
  renderContractTest: (view) =>
    renderContractTest(view, {
      imports: `import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deleteExpiredKeys } from './cleanup.js';
import { LibsqlIdempotencyStore } from './libsqlStore.js';
import { createPool } from './pool.js';
import { POLICY } from './settings.js';`,
      gate: `const STORE_NAME = 'libSQL store';
// A throwaway local database file through @libsql/client: always runs.
const RUN = true;`,
      open: `    const dir = mkdtempSync(path.join(tmpdir(), throwaway()));
    const pool = createPool(\`file:\${path.join(dir, 'store.db')}\`);
    await pool.executeMultiple(
      readFileSync(new URL('./migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    const options = { table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: BOUNDS.storeTimeoutMs };
    // A client that is closed (the app is shutting down): every call must fail closed.
    const dead = createPool(\`file:\${path.join(dir, 'closed.db')}\`);
    dead.close();
    return {
      store: new LibsqlIdempotencyStore({ pool, ...options }),
      unavailable: async () => new LibsqlIdempotencyStore({ pool: dead, ...options, timeoutMs: 200 }),
      cleanup: async () =>
        (await deleteExpiredKeys({ pool, table: POLICY.table, stepTable: POLICY.stepTable, batchSize: 10 }))
          .deleted,
      close: async () => {
        pool.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };`,
    }),
};
