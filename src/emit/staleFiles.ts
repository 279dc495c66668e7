import type { PlannedWrite } from './planWrites.js';

/**
 * What `generate --check` fails on: files a real run would create, rewrite or delete; a foreign file sitting where a
 * managed file belongs; and an edited scaffold file that is behind, i.e. the generated version it started from (the
 * manifest's hash) is no longer what generate produces, so the document describes code the project does not have.
 * An edited file whose generated version has not moved is the user's and agrees with the document; it never fails.
 */
export function staleFiles(plan: readonly PlannedWrite[]): PlannedWrite[] {
  return plan.filter(
    (item) =>
      item.action === 'create' || item.action === 'update' || item.action === 'remove' || item.behind === true || (item.class === 'managed' && item.action === 'user-modified'),
  );
}

export function describeStale(item: PlannedWrite): string {
  if (item.action === 'create') return `${item.path} (missing)`;
  if (item.action === 'remove') return `${item.path} (no longer generated; would be removed)`;
  if (item.behind) return `${item.path} (edited by you; its generated version changed, so the document no longer matches this code: \`generate --force\` takes the new version, or merge it by hand and run \`generate --accept ${item.path}\`)`;
  if (item.action === 'user-modified') return `${item.path} (not written by idempotency-builder)`;
  return `${item.path} (differs)`;
}
