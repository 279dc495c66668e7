import type { Pool, PoolClient } from 'pg';
import { quoteIdent } from '../pgStore.js';
import { POLICY } from '../settings.js';
import type { OrderingGuard } from './webhooks.js';

/**
 * The per-object "last applied" record (migrations/002_webhook_object_versions.sql). advance() moves an object's
 * version forward and says whether the event may be applied: an event older than the newest applied one for its
 * object is not (equal versions are: two events in the same second must both apply). In transactional mode it
 * runs in the event's own transaction (`db`), so the version and the effect commit or roll back together.
 */
export class PgOrderingGuard implements OrderingGuard {
  private readonly sql: string;

  constructor(
    private readonly pool: Pool,
    table = `${POLICY.table}_webhook_versions`,
  ) {
    const t = quoteIdent(table);
    this.sql = `INSERT INTO ${t} AS t (object, version, event_key) VALUES ($1, $2, $3)
ON CONFLICT (object) DO UPDATE SET version = EXCLUDED.version, event_key = EXCLUDED.event_key, updated_at = now()
WHERE t.version <= EXCLUDED.version
RETURNING 1`;
  }

  async advance(db: unknown, object: string, version: number, eventKey: string): Promise<boolean> {
    const client = (db as PoolClient | undefined) ?? this.pool;
    const { rowCount } = await client.query(this.sql, [object, Math.trunc(version), eventKey]);
    return rowCount === 1;
  }
}
