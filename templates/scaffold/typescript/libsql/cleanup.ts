import type { Client } from '@libsql/client';
import { NOW_MS, quoteIdent } from './libsqlStore.js';

export interface CleanupOptions {
  readonly pool: Client;
  readonly table: string;
  /** The saga step table: a record's steps go in the same batch as the record. */
  readonly stepTable?: string;
  readonly batchSize: number;
  /** Stop after this many batches; the next run continues. */
  readonly maxBatches?: number;
}

/**
 * Deletes expired records in small batches, each one write batch (one round trip, one short hold of the write lock)
 * so claims get the lock in between. Never touches a live claim: a PROCESSING record goes only once both its
 * retention and its lease have lapsed. Saga steps are deleted with their record in the same batch, whether or not
 * the connection enforces foreign keys.
 */
export async function deleteExpiredKeys(
  options: CleanupOptions,
): Promise<{ deleted: number; batches: number }> {
  const t = quoteIdent(options.table);
  const expired = `SELECT scope, key FROM ${t}
  WHERE expires_at <= ${NOW_MS} AND (status <> 'PROCESSING' OR locked_until <= ${NOW_MS})
  ORDER BY expires_at, scope, key LIMIT ?`;
  const records = `DELETE FROM ${t} WHERE (scope, key) IN (${expired})`;
  let deleted = 0;
  let batches = 0;
  const maxBatches = options.maxBatches ?? 1_000;
  while (batches < maxBatches) {
    const statements = [{ sql: records, args: [options.batchSize] }];
    if (options.stepTable)
      statements.unshift({
        sql: `DELETE FROM ${quoteIdent(options.stepTable)} WHERE (scope, key) IN (${expired})`,
        args: [options.batchSize],
      });
    const results = await writeWhenFree(() => options.pool.batch(statements, 'write'));
    const changes = results[results.length - 1]?.rowsAffected ?? 0;
    batches += 1;
    deleted += changes;
    if (changes < options.batchSize) break;
  }
  return { deleted, batches };
}

/**
 * A local file has one writer: while a request holds its lock (SQLITE_BUSY), wait a little and try again, for about
 * five seconds at most.
 */
async function writeWhenFree<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 0, wait = 1; ; attempt += 1, wait = Math.min(wait * 2, 50)) {
    try {
      return await write();
    } catch (error) {
      const code = (error as { code?: unknown } | undefined)?.code;
      if (attempt >= 100 || typeof code !== 'string' || !code.startsWith('SQLITE_BUSY')) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
