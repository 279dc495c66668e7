import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { PlannedWrite } from './planWrites.js';
import { resolveInside } from './safePath.js';

const LINK_FIX = 'Replace the link with a real file or folder, or choose another output path (--out, or scaffold.dir in the config). idempotency-builder never follows links for the files it owns.';

/**
 * Checks every write and removal before the first one happens, so predictable failures (a file where a folder
 * should be, a folder where the file goes, a read-only file, a symbolic link anywhere on the way) stop the run
 * with nothing written at all.
 */
export async function preflight(root: string, work: readonly PlannedWrite[]): Promise<void> {
  for (const item of work) {
    const absolute = resolveInside(root, item.path);
    const parts = path.relative(root, absolute).split(path.sep);
    let walked = root;
    for (const [index, part] of parts.entries()) {
      walked = path.join(walked, part);
      const shown = parts.slice(0, index + 1).join('/');
      const info = await lstat(walked).catch(() => undefined);
      if (!info) break; // Missing folders are created by the write.
      const last = index === parts.length - 1;
      if (info.isSymbolicLink()) {
        const verb = item.action === 'remove' ? 'remove' : 'write';
        throw new UserError(`Refusing to ${verb} ${item.path}: ${shown} is a symbolic link.`, LINK_FIX);
      }
      if (!last && !info.isDirectory()) {
        throw new UserError(`Cannot write ${item.path}: ${shown} is a file, but a folder is needed there.`, `Rename or remove the file ${shown}, or choose another output path (--out, or scaffold.dir in the config).`);
      }
      if (last && info.isDirectory()) {
        throw new UserError(`Cannot write ${item.path}: a folder with that name exists.`, 'Move the folder away or choose another output path (--out).');
      }
      if (last && (info.mode & 0o200) === 0) {
        throw new UserError(`Cannot ${item.action === 'remove' ? 'remove' : 'write'} ${item.path}: the file is read-only.`, `Make it writable (chmod u+w ${item.path}) and run the command again.`);
      }
    }
  }
}
