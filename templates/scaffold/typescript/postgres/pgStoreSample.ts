import type { Pool } from 'pg';
import type { StoreSample } from './metrics.js';
import { quoteIdent } from './pgStore.js';
import { POLICY } from './settings.js';

/**
 * The store gauges' reading for observeStore (metrics.ts): the planner's row estimate (cheap, no table scan) and the
 * age of the oldest in-flight claim, which the orphan partial index answers.
 */
export function pgStoreSample(pool: Pool, table: string = POLICY.table): () => Promise<StoreSample> {
  const t = quoteIdent(table);
  return async () => {
    const size = await pool.query<{ n: string }>(
      `SELECT GREATEST(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = to_regclass($1)`,
      [t],
    );
    const oldest = await pool.query<{ age: string | null }>(
      `SELECT EXTRACT(EPOCH FROM now() - min(created_at)) AS age FROM ${t} WHERE status = 'PROCESSING'`,
    );
    return {
      size: size.rows[0] ? Number(size.rows[0].n) : undefined,
      oldestInFlightSeconds: oldest.rows[0] ? Number(oldest.rows[0].age ?? 0) : undefined,
    };
  };
}
