import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { CancelledError } from '../errors.js';
import { fileSystemError } from './fileSystemError.js';
import { MANIFEST_PATH, serializeManifest, type Manifest } from './manifest.js';
import { nextManifest } from './nextManifest.js';
import type { PlannedWrite } from './planWrites.js';
import { preflight } from './preflight.js';
import { assertNoSymlinks, readInside, resolveInside } from './safePath.js';
import { commitStaged, discard, stage, type Staged } from './writeAtomic.js';

export { writeAtomic, writeInside } from './writeAtomic.js';

export interface ApplyOptions {
  /** Footer date of this generation (YYYY-MM-DD), recorded in the manifest. */
  date?: string;
  /** The generation's inputs key (inputsKey.ts), recorded when the whole plan is applied. */
  inputs?: string;
  /** Ctrl-C / SIGTERM: honoured until the first rename; after that the run completes so the project stays whole. */
  signal?: AbortSignal;
}

/** Deletes an orphan, then any folders it leaves empty (never the project root). */
async function removeFile(root: string, relative: string): Promise<void> {
  await assertNoSymlinks(root, relative, 'remove');
  const absolute = resolveInside(root, relative, 'remove');
  try {
    await rm(absolute, { force: true });
  } catch (error) {
    throw fileSystemError(error, 'remove', relative);
  }
  for (let dir = path.dirname(absolute); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    if (!(await rmdir(dir).then(() => true, () => false))) break;
  }
}

/** The manifest is rewritten only when it changes, so an unchanged run touches nothing on disk. */
async function stageManifest(root: string, manifest: Manifest): Promise<Staged | undefined> {
  const text = serializeManifest(manifest);
  if ((await readInside(root, MANIFEST_PATH)) === text) return undefined;
  await assertNoSymlinks(root, MANIFEST_PATH, 'write');
  return stage(resolveInside(root, MANIFEST_PATH), text, MANIFEST_PATH);
}

/**
 * Applies a plan in two phases. Staging writes every new file (and the manifest) to a temp file beside its target;
 * a full disk, a cancellation or any other failure there discards the temp files and leaves the project exactly as
 * it was. Committing renames them into place and removes orphans; it is not interrupted. If a rename fails half-way
 * (rare: the disk was fine a moment ago), the manifest still records the files that were replaced, so the next run
 * knows they are the tool's and does not mistake them for user edits.
 */
export async function applyPlan(root: string, plan: readonly PlannedWrite[], options: ApplyOptions = {}): Promise<void> {
  const work = plan.filter((item) => item.action === 'create' || item.action === 'update' || item.action === 'remove');
  await preflight(root, work);
  const staged = new Map<PlannedWrite, Staged>();
  let manifest: Staged | undefined;
  try {
    for (const item of work) {
      options.signal?.throwIfAborted();
      if (item.action !== 'remove') staged.set(item, await stage(resolveInside(root, item.path), item.contents, item.path));
    }
    options.signal?.throwIfAborted();
    manifest = await stageManifest(root, nextManifest(plan, options));
  } catch (error) {
    await discard([...staged.values()]);
    throw options.signal?.aborted ? new CancelledError('Cancelled; nothing was written.') : error;
  }

  const applied = new Set<PlannedWrite>();
  try {
    for (const item of work) {
      const temp = staged.get(item);
      if (temp) await commitStaged(temp);
      else await removeFile(root, item.path);
      applied.add(item);
    }
  } catch (error) {
    await discard([...staged.values(), ...(manifest ? [manifest] : [])]);
    const partial = await stageManifest(root, nextManifest(plan, { ...options, applied })).catch(() => undefined);
    if (partial) await commitStaged(partial).catch(() => undefined);
    throw error;
  }
  if (manifest) await commitStaged(manifest);
}
