import { printModule } from './javascript/printModule.js';
import type { ModuleType } from './javascript/transpile.js';
import type { ScaffoldView } from './scaffoldView.js';
import { commentText } from './tsLiteral.js';

/** Where a store's cleanup differs: it deletes saga steps itself (stepTable), or its client closes otherwise. */
export interface CleanupJobStore {
  readonly stepTable?: boolean;
  readonly close?: string;
}

/**
 * cleanup-job.ts: the runnable form of deleteExpiredKeys, for cron / a Kubernetes CronJob; in the house style
 * (prettier's layout). With `javascript`, the same file as JavaScript in that module format, as the compiler and
 * prettier would give it.
 */
export function renderCleanupJob(
  view: ScaffoldView,
  urlExample = 'postgres://...',
  overlap = 'overlapping runs are safe: rows are taken with SKIP LOCKED',
  javascript?: ModuleType,
  store: CleanupJobStore = {},
): string {
  const main = javascript
    ? `/**
 * @param {string} databaseUrl
 * @returns {Promise<void>}
 */
async function main(databaseUrl) {`
    : 'async function main(databaseUrl: string): Promise<void> {';
  const pushType = pushFetchType(javascript);
  const pushRead = pushFetchRead(javascript);
  const code = `// Deletes expired idempotency records, then exits. Schedule: ${commentText(view.cleanupSchedule)} (${commentText(view.cleanupScheduleLabel)}).
// Usage: DATABASE_URL=${commentText(urlExample)} node cleanup-job.js   (${commentText(overlap)})
import { deleteExpiredKeys } from './cleanup.js';
import { createPool } from './pool.js';
import { METRIC_NAMES, POLICY } from './settings.js';
${pushType}
const url = process.env.DATABASE_URL;
if (!url) {
  console.error('cleanup-job: DATABASE_URL is not set');
  process.exitCode = 2;
}

${main}
  // Cleanup statements may touch a whole batch, so they get more time than request-path calls.
  const pool = createPool(
    databaseUrl,
    {
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
      statementTimeoutMs: Math.max(POLICY.statementTimeoutMs, 30_000),
    },
    1,
  );
  try {
    const { deleted, batches } = await deleteExpiredKeys({
      pool,
      table: POLICY.table,${store.stepTable ? '\n      stepTable: POLICY.stepTable,' : ''}
      batchSize: POLICY.cleanupBatchSize,
    });
    console.log(\`cleanup-job: deleted \${deleted} expired records in \${batches} batches\`);
    // The deleted-rows metric: one line in Prometheus text format (for a textfile collector), and pushed to a
    // Pushgateway when PUSHGATEWAY_URL is set, so a cron job that exits still reports it.
    const line = \`\${METRIC_NAMES.cleanupDeleted} \${deleted}\`;
    const sample = \`\${line}\\n\`;
    console.log(line);
    const gateway = process.env.PUSHGATEWAY_URL;
    if (gateway) {
      // Read by shape: typings before @types/node 18 (and no DOM lib) declare no fetch global.
      const push = ${pushRead};
      if (!push) throw new Error('PUSHGATEWAY_URL is set, but this Node has no fetch (18 or later has)');
      const response = await push(\`\${gateway.replace(/\\/+$/, '')}/metrics/job/idempotency_cleanup\`, {
        method: 'POST',
        body: sample,
      });
      if (!response.ok) console.error(\`cleanup-job: Pushgateway answered \${response.status}\`);
    }
  } catch (error) {
    console.error('cleanup-job failed:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  } finally {
    ${store.close ?? 'await pool.end();'}
  }
}

if (url) void main(url);
`;
  return javascript ? printModule(code, javascript) : code;
}

/**
 * The part of fetch a job's Pushgateway push uses, declared where the imports end, read from globalThis by shape
 * (typings before @types/node 18 declare no fetch). In JavaScript the typedef the compiler writes sits right under
 * the imports; the comment above the type does not survive.
 */
export function pushFetchType(javascript: ModuleType | undefined): string {
  return javascript
    ? `/** @typedef {(url: string, init: { method: 'POST'; body: string; }) => Promise<{ ok: boolean; status: number; }>} PushFetch */\n`
    : `
/** The part of fetch the push uses. */
type PushFetch = (
  url: string,
  init: { method: 'POST'; body: string },
) => Promise<{ ok: boolean; status: number }>;
`;
}

export function pushFetchRead(javascript: ModuleType | undefined): string {
  return javascript
    ? '/** @type {{ fetch?: PushFetch; }} */ (/** @type {unknown} */ (globalThis)).fetch'
    : '(globalThis as unknown as { fetch?: PushFetch }).fetch';
}
