import type { Pool, ResultSetHeader } from 'mysql2/promise';
import { quoteIdent } from './mysqlStore.js';

export interface CleanupOptions {
  readonly pool: Pool;
  readonly table: string;
  readonly batchSize: number;
  /** Stop after this many batches so one run cannot monopolise the database; the next run continues. */
  readonly maxBatches?: number;
}

/**
 * Deletes expired records in small batches along the expires_at index. Never touches a live claim: a PROCESSING
 * record goes only once both its retention and its lease have lapsed. InnoDB re-checks the conditions on the
 * latest row version after any lock wait, so a key reclaimed a moment ago survives. Saga steps go with their record
 * (ON DELETE CASCADE).
 */
export async function deleteExpiredKeys(
  options: CleanupOptions,
): Promise<{ deleted: number; batches: number }> {
  const sql = `DELETE FROM ${quoteIdent(options.table)}
WHERE expires_at <= UTC_TIMESTAMP(3) AND (status <> 'PROCESSING' OR locked_until <= UTC_TIMESTAMP(3))
ORDER BY expires_at LIMIT ?`;
  let deleted = 0;
  let batches = 0;
  const maxBatches = options.maxBatches ?? 1_000;
  while (batches < maxBatches) {
    const [result] = await options.pool.query<ResultSetHeader>(sql, [options.batchSize]);
    batches += 1;
    deleted += result.affectedRows;
    if (result.affectedRows < options.batchSize) break;
  }
  return { deleted, batches };
}
