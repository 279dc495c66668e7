import { type Manifest, type ManifestEntry, sha256Of } from './manifest.js';
import type { PlannedWrite } from './planWrites.js';

/**
 * The manifest after applying `plan` (or the part of it in `applied`, when a write failed half-way): what the tool
 * wrote or found identical is recorded with its hash; a skipped file keeps the hash the tool last wrote, so it
 * becomes the tool's again if the user reverts the edit; removed and orphaned files drop out.
 */
export function nextManifest(plan: readonly PlannedWrite[], options: { date?: string; inputs?: string; applied?: ReadonlySet<PlannedWrite> } = {}): Manifest {
  const files: ManifestEntry[] = [];
  for (const item of plan) {
    // Additions to the user's own files (schema.prisma, a migration journal) never make the file the tool's.
    if (item.editOf !== undefined) continue;
    const done = options.applied === undefined || options.applied.has(item);
    if (item.action === 'unchanged' || ((item.action === 'create' || item.action === 'update') && done)) {
      files.push({ path: item.path, class: item.class, sha256: sha256Of(item.contents), ...(item.source ? { source: item.source } : {}) });
    } else if (item.accepted) {
      // The edited file now counts as based on this generated version (see acceptEdits in planWrites).
      files.push({ path: item.path, class: item.class, sha256: sha256Of(item.contents), ...(item.source ? { source: item.source } : {}) });
    } else if (item.tracked && (item.action === 'user-modified' || !done)) {
      files.push(item.tracked);
    }
  }
  // The inputs key vouches for every file; a half-applied plan (applied given) cannot.
  const inputs = options.applied === undefined ? options.inputs : undefined;
  return { ...(options.date ? { date: options.date } : {}), ...(inputs ? { inputs } : {}), files };
}
