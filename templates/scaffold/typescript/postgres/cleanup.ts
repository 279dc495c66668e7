import type { Pool } from 'pg';
import { quoteIdent } from './pgStore.js';

export interface CleanupOptions {
  readonly pool: Pool;
  readonly table: string;
  readonly batchSize: number;
  /** Stop after this many batches so one run cannot monopolise the database; the next run continues. */
  readonly maxBatches?: number;
}

/**
 * Deletes expired records in small batches. Never touches a live claim: a PROCESSING record goes only once both its
 * retention and its lease have lapsed (an abandoned claim). SKIP LOCKED lets it run beside traffic without waiting
 * on rows that requests are using, and the conditions are re-checked on the locked row, so a key reclaimed a moment
 * ago survives. Saga steps go with their record (ON DELETE CASCADE).
 */
export async function deleteExpiredKeys(
  options: CleanupOptions,
): Promise<{ deleted: number; batches: number }> {
  const t = quoteIdent(options.table);
  const sql = `DELETE FROM ${t} AS t USING (
  SELECT scope, key FROM ${t}
  WHERE (status <> 'PROCESSING' AND expires_at <= now())
     OR (status = 'PROCESSING' AND locked_until <= now() AND expires_at <= now())
  ORDER BY expires_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
) AS doomed
WHERE t.scope = doomed.scope AND t.key = doomed.key AND t.expires_at <= now()
  AND (t.status <> 'PROCESSING' OR t.locked_until <= now())`;
  let deleted = 0;
  let batches = 0;
  const maxBatches = options.maxBatches ?? 1_000;
  while (batches < maxBatches) {
    const result = await options.pool.query(sql, [options.batchSize]);
    batches += 1;
    deleted += result.rowCount ?? 0;
    if ((result.rowCount ?? 0) < options.batchSize) break;
  }
  return { deleted, batches };
}
