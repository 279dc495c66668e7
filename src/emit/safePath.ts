import { constants } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';

/**
 * The one door to the files the tool owns (outputs, manifest, state dir): every path is normalised, confined to the
 * project root, and no symbolic link inside the project is ever followed, for reads as much as for writes. A link
 * where an output belongs could otherwise make `--diff` print a secret or a write land outside the project.
 */

export type Verb = 'read' | 'write' | 'remove';

const LINK_FIX = 'Replace the link with a real file or folder, or choose another path (--out, or scaffold.dir in the config). idempotency-builder never follows links for the files it owns.';

/**
 * `docs/../docs/x.html`, `./x`, `docs\\x` (on Windows) → one canonical POSIX project-relative path, so the same file
 * always has the same name in the plan and the manifest. Refuses absolute paths and anything that leaves the root.
 */
export function normalizeRelative(relative: string, verb: Verb = 'write'): string {
  const posix = relative.split(path.sep).join('/');
  const normal = path.posix.normalize(posix).replace(/\/+$/, '');
  if (relative === '' || path.posix.isAbsolute(normal) || path.isAbsolute(relative) || normal === '.' || normal === '..' || normal.startsWith('../')) {
    throw new UserError(`Refusing to ${verb} ${relative}: it is outside the project root.`, 'Choose an output path inside the project (e.g. docs/idempotency-design.html).');
  }
  return normal;
}

/** The same as normalizeRelative, but undefined instead of an error (for paths read from a hand-editable manifest). */
export function tryNormalizeRelative(relative: string): string | undefined {
  try {
    return normalizeRelative(relative);
  } catch {
    return undefined;
  }
}

/** Resolves a project-relative path and refuses anything that would land outside the project root. */
export function resolveInside(root: string, relative: string, verb: Verb = 'write'): string {
  return path.join(path.resolve(root), normalizeRelative(relative, verb));
}

/**
 * lstat on every component below the root: refuses a symbolic link anywhere on the way (the root itself may be one,
 * it is the user's choice of project). Stops quietly at the first missing component: it will be created.
 */
export async function assertNoSymlinks(root: string, relative: string, verb: Verb): Promise<void> {
  const normal = normalizeRelative(relative, verb);
  const parts = normal.split('/');
  let walked = path.resolve(root);
  for (const [index, part] of parts.entries()) {
    walked = path.join(walked, part);
    const info = await lstat(walked).catch(() => undefined);
    if (!info) return;
    if (info.isSymbolicLink()) {
      const shown = parts.slice(0, index + 1).join('/');
      const target = await readlink(walked).catch(() => '?');
      throw new UserError(`Refusing to ${verb} ${normal}: ${shown} is a symbolic link (to ${JSON.stringify(target)}).`, LINK_FIX);
    }
  }
}

/**
 * Reads a project file without following links: undefined when it (or a folder on its way) does not exist or is a
 * folder. O_NOFOLLOW closes the gap between the check and the open for the last component.
 */
export async function readInside(root: string, relative: string): Promise<string | undefined> {
  await assertNoSymlinks(root, relative, 'read');
  const absolute = resolveInside(root, relative, 'read');
  let handle;
  try {
    handle = await open(absolute, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    if (code === 'ELOOP') throw new UserError(`Refusing to read ${normalizeRelative(relative)}: it is a symbolic link.`, LINK_FIX);
    throw new UserError(`Cannot read ${normalizeRelative(relative)}: ${(error as Error).message}.`, 'Make the file readable and run the command again.');
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return undefined;
    if (!info.isFile()) throw new UserError(`Refusing to read ${normalizeRelative(relative)}: it is not a regular file.`, 'Remove it or choose another output path.');
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

export function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}
