import path from 'node:path';
import { UserError } from '../errors.js';

/** Resolves a project-relative path and refuses anything that would land outside the project root. */
export function resolveInside(root: string, relative: string): string {
  const absolute = path.resolve(root, relative);
  const fromRoot = path.relative(root, absolute);
  if (fromRoot === '' || fromRoot.startsWith('..') || path.isAbsolute(fromRoot)) {
    throw new UserError(`Refusing to write ${relative}: it is outside the project root ${root}.`, 'Choose an output path inside the project (e.g. docs/idempotency-design.html).');
  }
  return absolute;
}

export function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}
