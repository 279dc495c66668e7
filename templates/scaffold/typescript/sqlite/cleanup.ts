import type { SqlitePool } from './pool.js';
import { NOW_MS, quoteIdent } from './sqliteStore.js';

export interface CleanupOptions {
  readonly pool: SqlitePool;
  readonly table: string;
  readonly batchSize: number;
  /** Stop after this many batches; the next run continues. */
  readonly maxBatches?: number;
}

/**
 * Deletes expired records in small batches, each its own short write transaction so requests get the write lock
 * in between. Never touches a live claim: a PROCESSING record goes only once both its retention and its lease have
 * lapsed. Saga steps go with their record (ON DELETE CASCADE; foreign keys are on in createPool's connections).
 */
export async function deleteExpiredKeys(
  options: CleanupOptions,
): Promise<{ deleted: number; batches: number }> {
  const t = quoteIdent(options.table);
  const db = options.pool.db;
  const statement = db.prepare(`DELETE FROM ${t} WHERE rowid IN (
  SELECT rowid FROM ${t}
  WHERE expires_at <= ${NOW_MS} AND (status <> 'PROCESSING' OR locked_until <= ${NOW_MS})
  ORDER BY expires_at LIMIT ?
)`);
  let deleted = 0;
  let batches = 0;
  const maxBatches = options.maxBatches ?? 1_000;
  while (batches < maxBatches) {
    const changes = await writeWhenFree(db, () => statement.run(options.batchSize).changes);
    batches += 1;
    deleted += changes;
    if (changes < options.batchSize) break;
  }
  return { deleted, batches };
}

/** One batch under BEGIN IMMEDIATE, waiting (without blocking the event loop) while a request holds the lock. */
async function writeWhenFree(db: SqlitePool['db'], work: () => number): Promise<number> {
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      db.exec('BEGIN IMMEDIATE');
      break;
    } catch (error) {
      if ((error as { code?: unknown })?.code !== 'SQLITE_BUSY') throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
