import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { PlannedWrite } from './planWrites.js';
import { resolveInside } from './safePath.js';

/** Writes through a temp file in the same folder and renames it, so a reader never sees half a file. */
export async function writeAtomic(absolute: string, contents: string): Promise<void> {
  const dir = path.dirname(absolute);
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw environmentError(error, dir);
  }
  const info = await stat(absolute).catch(() => undefined);
  if (info?.isDirectory()) throw new UserError(`Cannot write ${absolute}: a folder with that name exists.`, 'Move the folder or choose another output path.');
  const temp = path.join(dir, `.${path.basename(absolute)}.${process.pid}.tmp`);
  try {
    await writeFile(temp, contents, 'utf8');
    await rename(temp, absolute);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw environmentError(error, absolute);
  }
}

function environmentError(error: unknown, where: string): UserError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'ENOSPC'
        ? 'the disk is full'
        : code === 'ENOTDIR'
          ? 'a file stands where a folder is needed'
          : code === 'EROFS'
            ? 'the file system is read-only'
            : (error as Error).message;
  return new UserError(`Cannot write ${where}: ${reason}.`, 'Fix the file system problem and run the command again; nothing was left half-written.');
}

export async function applyPlan(root: string, plan: readonly PlannedWrite[]): Promise<void> {
  for (const item of plan) {
    if (item.action === 'create' || item.action === 'update') await writeAtomic(resolveInside(root, item.path), item.contents);
  }
}
