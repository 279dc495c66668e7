import type { PlannedWrite } from './planWrites.js';

/**
 * What `generate --check` fails on: files a real run would create, rewrite or delete. Scaffold files the user edited
 * are theirs and never stale; a foreign file sitting where a managed file belongs is, since the docs are not current.
 */
export function staleFiles(plan: readonly PlannedWrite[]): PlannedWrite[] {
  return plan.filter(
    (item) => item.action === 'create' || item.action === 'update' || item.action === 'remove' || (item.class === 'managed' && item.action === 'user-modified'),
  );
}

export function describeStale(item: PlannedWrite): string {
  if (item.action === 'create') return `${item.path} (missing)`;
  if (item.action === 'remove') return `${item.path} (no longer generated; would be removed)`;
  if (item.action === 'user-modified') return `${item.path} (not written by idempotency-builder)`;
  return `${item.path} (differs)`;
}
