import { readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileSystemError } from './fileSystemError.js';
import { MANIFEST_PATH, serializeManifest, type Manifest } from './manifest.js';
import { nextManifest } from './nextManifest.js';
import type { PlannedWrite } from './planWrites.js';
import { preflight } from './preflight.js';
import { resolveInside } from './safePath.js';
import { writeAtomic } from './writeAtomic.js';

export { writeAtomic } from './writeAtomic.js';

export interface ApplyOptions {
  /** Footer date of this generation (YYYY-MM-DD), recorded in the manifest. */
  date?: string;
}

/** The manifest is rewritten only when it changes, so an unchanged run touches nothing on disk. */
async function writeManifest(root: string, manifest: Manifest): Promise<void> {
  const absolute = path.join(root, MANIFEST_PATH);
  const text = serializeManifest(manifest);
  if ((await readFile(absolute, 'utf8').catch(() => undefined)) === text) return;
  await writeAtomic(absolute, text, MANIFEST_PATH);
}

/** Deletes an orphan, then any folders it leaves empty (never the project root). */
async function removeFile(root: string, relative: string): Promise<void> {
  const absolute = resolveInside(root, relative);
  try {
    await rm(absolute, { force: true });
  } catch (error) {
    throw fileSystemError(error, 'remove', relative);
  }
  for (let dir = path.dirname(absolute); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    if (!(await rmdir(dir).then(() => true, () => false))) break;
  }
}

/**
 * Applies a plan: writes creates and updates atomically, removes orphans, then records the manifest. If a write
 * fails half-way (disk full), the manifest still records the files that were written, so the next run knows they
 * are the tool's and does not mistake them for user edits.
 */
export async function applyPlan(root: string, plan: readonly PlannedWrite[], options: ApplyOptions = {}): Promise<void> {
  const work = plan.filter((item) => item.action === 'create' || item.action === 'update' || item.action === 'remove');
  await preflight(root, work);
  const applied = new Set<PlannedWrite>();
  try {
    for (const item of work) {
      if (item.action === 'remove') await removeFile(root, item.path);
      else await writeAtomic(resolveInside(root, item.path), item.contents, item.path);
      applied.add(item);
    }
  } catch (error) {
    await writeManifest(root, nextManifest(plan, { ...options, applied })).catch(() => undefined);
    throw error;
  }
  await writeManifest(root, nextManifest(plan, options));
}
