import { UserError } from '../errors.js';

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a file stands where a folder is needed',
  EISDIR: 'a folder stands where the file should go',
  EEXIST: 'a file stands where a folder is needed',
  ENAMETOOLONG: 'the path is too long',
};

/** Turns an fs failure into one sentence plus a fix: users see what went wrong, never a stack trace. */
export function fileSystemError(error: unknown, verb: 'write' | 'remove', relative: string): UserError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const reason = REASONS[code] ?? (error as Error).message;
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'Free some space and run the command again; every file is either fully written or untouched.'
      : 'Fix the file system problem and run the command again; every file is either fully written or untouched.';
  return new UserError(`Cannot ${verb} ${relative}: ${reason}.`, fix);
}
