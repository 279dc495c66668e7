import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileSystemError } from './fileSystemError.js';

/**
 * Writes through a temp file in the same folder and renames it over the target, so a reader (or a crash, or a full
 * disk) never leaves half a file. The previous file's permissions are kept: rename would otherwise reset them.
 */
export async function writeAtomic(absolute: string, contents: string, relative = absolute): Promise<void> {
  const dir = path.dirname(absolute);
  const temp = path.join(dir, `.${path.basename(absolute)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await mkdir(dir, { recursive: true });
    const previous = await stat(absolute).catch(() => undefined);
    await writeFile(temp, contents, { encoding: 'utf8', flag: 'wx' });
    if (previous) await chmod(temp, previous.mode & 0o7777);
    await rename(temp, absolute);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw fileSystemError(error, 'write', relative);
  }
}
