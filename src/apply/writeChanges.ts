import { CancelledError, UserError } from '../errors.js';
import { acquireProjectLock } from '../emit/projectLock.js';
import { assertNoSymlinks, readInside, resolveInside } from '../emit/safePath.js';
import { commitStaged, discard, stage, type Staged } from '../emit/writeAtomic.js';
import type { FileChange } from './planApply.js';

/**
 * Writes the changes under the project lock in two phases: every file is staged beside its target first (a failure
 * there leaves the project untouched), then renamed into place. A file that changed since the diff was shown is
 * refused before anything is staged: the user confirmed that diff, not another.
 */
export async function writeChanges(root: string, changes: readonly FileChange[], signal?: AbortSignal): Promise<void> {
  const release = await acquireProjectLock(root);
  try {
    const moved: string[] = [];
    for (const change of changes) {
      if ((await readInside(root, change.path)) !== change.before) moved.push(change.path);
    }
    if (moved.length > 0) {
      throw new UserError(`Not applied: ${moved.join(', ')} changed while the diff was shown.`, 'Run `idempotency-builder apply` again to see the diff for the current files.');
    }
    const staged: Staged[] = [];
    try {
      for (const change of changes) {
        signal?.throwIfAborted();
        await assertNoSymlinks(root, change.path, 'write');
        staged.push(await stage(resolveInside(root, change.path), change.after, change.path));
      }
    } catch (error) {
      await discard(staged);
      throw signal?.aborted ? new CancelledError('Cancelled; nothing was written.') : error;
    }
    for (const item of staged) await commitStaged(item);
  } finally {
    await release();
  }
}
