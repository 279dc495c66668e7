import { renderCleanupJob } from '../renderCleanupJob.js';
import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { renderMysqlMigration } from './mysqlDdl.js';
import { renderContractTest } from './renderContractTest.js';
import { SAGA_EXPORTS, SAGA_FILE } from './sagaFile.js';
import type { StoreModule } from './types.js';

const newStore = (timeoutMs: string) => `new MysqlIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: ${timeoutMs} })`;

/** MySQL 8 / MariaDB through mysql2: INSERT … ON DUPLICATE KEY takes the row lock, then a conditional takeover. */
export const MYSQL_STORE: StoreModule = {
  id: 'mysql',
  label: 'MySQL/MariaDB',
  serves: ['mysql', 'mariadb'],
  files: [
    { path: 'mysqlStore.ts', template: 'typescript/mysql/mysqlStore.ts', role: 'store', purpose: 'MySQL/MariaDB store: row-locked claim, fenced writes, bounded calls' },
    { path: 'pool.ts', template: 'typescript/mysql/pool.ts', role: 'store', purpose: 'a mysql2 pool for the store' },
    SAGA_FILE,
    { path: 'cleanup.ts', template: 'typescript/mysql/cleanup.ts', role: 'cleanup', purpose: 'batched deletion of expired records' },
  ],
  migration: { path: 'migrations/001_create_idempotency_store.sql', purpose: 'the InnoDB store table, its indexes and the saga step table', render: renderMysqlMigration },
  cleanupJob: (view, javascript) => renderCleanupJob(view, 'mysql://...', 'overlapping runs are safe: each row is deleted once, under its lock', javascript),
  transactional: true,
  dependencies: { runtime: ['mysql2'], dev: [] },
  wiring: {
    poolImport: `import type { Pool } from 'mysql2/promise';`,
    imports: `import { MysqlIdempotencyStore } from './mysqlStore.js';
import { SagaTracker } from './saga.js';`,
    exports: `export { MysqlIdempotencyStore } from './mysqlStore.js';
export { createPool, type PoolLimits } from './pool.js';
${SAGA_EXPORTS}
export { deleteExpiredKeys } from './cleanup.js';`,
    poolType: 'Pool',
    poolDoc: '  /** A mysql2/promise pool (createPool from ./pool.js); transactional handlers get one of its connections as `db`. */\n',
    build: `  const store = new MysqlIdempotencyStore({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.statementTimeoutMs,
    acquireTimeoutMs: POLICY.acquireTimeoutMs,
    lockTimeoutMs: POLICY.lockTimeoutMs,
  });`,
    saga: '  const saga = new SagaTracker({ steps: store });',
  },
  readme: {
    migrationStep: 'Apply `migrations/001_create_idempotency_store.sql` with your migration tool (or `mysql < file`): InnoDB tables in utf8mb4 with binary collation, so keys compare byte for byte.',
    limits: (view: ScaffoldView) => `- Store down or slow before the action: 503 "not processed" with Retry-After. Waiting for a connection stops after
  ${view.policy.acquireTimeoutMs} ms and each statement after ${view.policy.statementTimeoutMs} ms (on the client: MySQL has no per-statement limit for writes; a
  connection that overruns is destroyed, which rolls its transaction back), and a claim behind a concurrent duplicate
  waits at most \`innodb_lock_wait_timeout\` (${view.policy.lockTimeoutMs} ms, rounded up to whole seconds). The claim commits only on the
  client's COMMIT, so a claim the client was told failed can never commit later.`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel}; run \`cleanup-job.js\` on the schedule \`${view.cleanupSchedule}\` (${view.cleanupScheduleLabel}); it prints
  \`${view.metricNames.cleanupDeleted}\` and pushes it when PUSHGATEWAY_URL is set.`,
    tests: (command: string) => `\`DATABASE_URL=mysql://user@host/db ${command}\` creates a temporary database (the user needs CREATE and DROP), runs the scenarios and the store contract against it and drops it. Without DATABASE_URL the suites are skipped with a message.`,
  },
  tests: {
    fsImport: `import { readFileSync } from 'node:fs';\n`,
    // URL imported, not global: typings before @types/node 16 declare it only in 'url'.
    driverImport: `import { URL } from 'node:url';
import mysql from 'mysql2/promise';`,
    storeImport: `import { MysqlIdempotencyStore, quoteIdent } from './mysqlStore.js';`,
    gate: `const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'idempotency tests skipped: set DATABASE_URL to a MySQL/MariaDB server (mysql://...) where they may create a database',
  );`,
    skipIf: '!DATABASE_URL',
    declarations: `  const database = \`idem_test_\${randomBytes(6).toString('hex')}\`;
  let admin: mysql.Connection;
  let pool: mysql.Pool;`,
    setup: (migration: string) => `    admin = await mysql.createConnection({ uri: DATABASE_URL, multipleStatements: true });
    await admin.query(\`CREATE DATABASE \\\`\${database}\\\`\`);
    const url = new URL(DATABASE_URL!);
    url.pathname = \`/\${database}\`;
    pool = mysql.createPool({ uri: url.toString(), connectionLimit: 20, timezone: 'Z' });
    await ${houseExpression(`admin.query(\`USE \\\`\${database}\\\`; \${readFileSync(${migration}, 'utf8')}\`)`, '    ', '    await '.length, 1)};
    // Stands in for the action's own table: one row per execution, written the way the action's mode prescribes.
    await pool.query(
      'CREATE TABLE test_effects (scope varchar(255) NOT NULL, \`key\` varchar(255) NOT NULL) ENGINE = InnoDB',
    );`,
    teardown: `    await pool?.end();
    await admin?.query(\`DROP DATABASE IF EXISTS \\\`\${database}\\\`\`);
    await admin?.end();`,
    effectHelpers: `  /**
   * The handler's effect. Transactional mode: written through the transaction the handler is given, so it commits
   * or rolls back with the claim. Lease mode: written on its own, like a call to another service.
   */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    const sql = 'INSERT INTO test_effects (scope, \`key\`) VALUES (?, ?)';
    if (ACTION.mode === 'transactional')
      await (context.db as mysql.PoolConnection).query(sql, [context.scope, context.key]);
    else await pool.query(sql, [context.scope, context.key]);
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    const [rows] = await pool.query<mysql.RowDataPacket[]>(
      'SELECT count(*) AS n FROM test_effects WHERE scope = ? AND \`key\` = ?',
      [scope, key],
    );
    return Number(rows[0]?.n ?? 0);
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // Derived keys are hashes; the newest record is the one this test just wrote (tests in a file run in order).
    const [rows] = await pool.query<mysql.RowDataPacket[]>(
      \`SELECT scope, \\\`key\\\` FROM \${quoteIdent(POLICY.table)} ORDER BY created_at DESC\`,
    );
    const found = USES_HEADER ? rows.find((row) => row.key === \`key-\${id}\`) : rows[0];
    if (!found) throw new Error('record not found');
    return { scope: String(found.scope), key: String(found.key) };
  }`,
    assertFinished: `    const [rows] = await pool.query<mysql.RowDataPacket[]>(
      \`SELECT status FROM \${quoteIdent(POLICY.table)} WHERE status <> 'PROCESSING'\`,
    );
    expect(rows.length).toBeGreaterThan(0);`,
    expireRecord: `    await pool.query(
      \`UPDATE \${quoteIdent(POLICY.table)} SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE scope = ? AND \\\`key\\\` = ?\`,
      [scope, key],
    );`,
    crashTransactional: `  it('crash mid-transaction: duplicates wait or get 409, the open transaction rolls back, the retry runs once', async () => {
    const core = new IdempotencyCore(
      new MysqlIdempotencyStore({
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
    // The worker dies: its connection goes, and InnoDB rolls back the claim and the effect together.
    (dead.context.db as mysql.PoolConnection).destroy();
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
    await pool.query(
      \`UPDATE \${quoteIdent(POLICY.table)} SET locked_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE scope = ? AND \\\`key\\\` = ?\`,
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

`,
    newStore,
    newSaga: `new SagaTracker({ steps: ${newStore('POLICY.storeTimeoutMs')} })`,
    assertStillProcessing: `    const [rows] = await pool.query<mysql.RowDataPacket[]>(
      \`SELECT status, locked_until > UTC_TIMESTAMP(3) AS live FROM \${quoteIdent(POLICY.table)} WHERE \\\`key\\\` = ?\`,
      [key],
    );
    expect(rows.map((row) => ({ status: row.status, live: Number(row.live) === 1 }))).toEqual([
      { status: 'PROCESSING', live: true },
    ]);`,
  },
  renderContractTest: (view) =>
    renderContractTest(view, {
      imports: `import { readFileSync } from 'node:fs';
import { URL } from 'node:url';
import mysql from 'mysql2/promise';
import { deleteExpiredKeys } from './cleanup.js';
import { MysqlIdempotencyStore } from './mysqlStore.js';
import { createPool } from './pool.js';
import { POLICY } from './settings.js';`,
      gate: `const STORE_NAME = 'MySQL/MariaDB store';
const DATABASE_URL = process.env.DATABASE_URL;
const RUN = DATABASE_URL !== undefined;
if (!RUN)
  console.warn(
    'store contract skipped: set DATABASE_URL to a MySQL/MariaDB server where it may create a database',
  );`,
      open: `    const name = throwaway();
    const admin = await mysql.createConnection({ uri: DATABASE_URL, multipleStatements: true });
    await admin.query(\`CREATE DATABASE \\\`\${name}\\\`\`);
    await admin.query(
      \`USE \\\`\${name}\\\`; \${readFileSync(new URL('./migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8')}\`,
    );
    const url = new URL(DATABASE_URL!);
    url.pathname = \`/\${name}\`;
    const pool = createPool(url.toString(), BOUNDS, 20);
    const options = {
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: BOUNDS.storeTimeoutMs,
      lockTimeoutMs: BOUNDS.lockTimeoutMs,
    };
    // Nothing listens on port 1: every call must fail closed within its time-out.
    const dead = createPool('mysql://nobody@127.0.0.1:1/none', {
      acquireTimeoutMs: 500,
      statementTimeoutMs: 500,
    });
    return {
      store: new MysqlIdempotencyStore({ pool, ...options }),
      unavailable: async () => new MysqlIdempotencyStore({ pool: dead, ...options, timeoutMs: 500 }),
      cleanup: async () => (await deleteExpiredKeys({ pool, table: POLICY.table, batchSize: 10 })).deleted,
      close: async () => {
        await pool.end();
        await dead.end();
        await admin.query(\`DROP DATABASE IF EXISTS \\\`\${name}\\\`\`);
        await admin.end();
      },
    };`,
    }),
};
