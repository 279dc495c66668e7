import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, lstat, mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileSystemError } from './fileSystemError.js';
import { assertNoSymlinks, resolveInside } from './safePath.js';

/** A complete temp file beside its target, waiting to be renamed over it. */
export interface Staged {
  temp: string;
  absolute: string;
  relative: string;
  /** The outermost folder this staging created (mkdir -p), removed again when the write is discarded. */
  createdDir?: string;
}

/** Temp files not yet renamed or removed: a second Ctrl-C deletes them synchronously before the process exits. */
const pending = new Set<string>();

export function removePendingTempFilesSync(): void {
  for (const temp of pending) rmSync(temp, { force: true });
  pending.clear();
}

/**
 * Writes the full contents to a temp file in the target's folder (created as needed). The previous file's
 * permissions are copied: rename would otherwise reset them. Nothing visible changes until commitStaged.
 */
export async function stage(absolute: string, contents: string, relative = absolute): Promise<Staged> {
  const dir = path.dirname(absolute);
  const temp = path.join(dir, `.${path.basename(absolute)}.${randomBytes(4).toString('hex')}.tmp`);
  let createdDir: string | undefined;
  try {
    createdDir = await mkdir(dir, { recursive: true });
    const previous = await lstat(absolute).catch(() => undefined);
    pending.add(temp);
    // 'wx' (O_EXCL) never follows a link planted at the temp name.
    await writeFile(temp, contents, { encoding: 'utf8', flag: 'wx' });
    if (previous?.isFile()) await chmod(temp, previous.mode & 0o7777);
  } catch (error) {
    await discard([{ temp, absolute, relative, ...(createdDir ? { createdDir } : {}) }]);
    throw fileSystemError(error, 'write', relative);
  }
  return { temp, absolute, relative, ...(createdDir ? { createdDir } : {}) };
}

/** rename(2) replaces the target in one step: readers see the old file or the new one, never half of either. */
export async function commitStaged(staged: Staged): Promise<void> {
  try {
    await rename(staged.temp, staged.absolute);
    pending.delete(staged.temp);
  } catch (error) {
    await discard([staged]);
    throw fileSystemError(error, 'write', staged.relative);
  }
}

/** Deletes temp files that were not renamed, then the folders staging created for them if they are empty again. */
export async function discard(staged: readonly Staged[]): Promise<void> {
  for (const item of staged) {
    await rm(item.temp, { force: true }).catch(() => undefined);
    pending.delete(item.temp);
  }
  // Deepest first, so a folder created for a nested file goes before its parent.
  const created = staged.flatMap((item) => (item.createdDir ? [{ top: item.createdDir, dir: path.dirname(item.absolute) }] : []));
  for (const { top, dir } of created.sort((a, b) => b.dir.length - a.dir.length)) {
    for (let current = dir; current.startsWith(top); current = path.dirname(current)) {
      if (!(await rmdir(current).then(() => true, () => false))) break;
    }
  }
}

/**
 * Writes through a temp file in the same folder and renames it over the target, so a reader (or a crash, or a full
 * disk) never leaves half a file.
 */
export async function writeAtomic(absolute: string, contents: string, relative = absolute): Promise<void> {
  await commitStaged(await stage(absolute, contents, relative));
}

/** writeAtomic for a project-relative path: confined to the root, no symbolic link followed on the way. */
export async function writeInside(root: string, relative: string, contents: string): Promise<void> {
  await assertNoSymlinks(root, relative, 'write');
  await writeAtomic(resolveInside(root, relative), contents, relative);
}
