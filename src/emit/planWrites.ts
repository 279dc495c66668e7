import { readFile } from 'node:fs/promises';
import type { RenderedFile } from '../render/renderDocument.js';
import { resolveInside } from './safePath.js';

export type WriteAction = 'create' | 'update' | 'unchanged' | 'user-modified';

export interface PlannedWrite extends RenderedFile {
  action: WriteAction;
  /** What is on disk now, for --diff; undefined when the file does not exist. */
  current?: string;
}

/** Line endings never count as a change: a CRLF checkout of the same content is "unchanged". */
export const normalizeEol = (text: string) => text.replace(/\r\n/g, '\n');

/**
 * Compares what would be written with the disk. Managed files are always brought up to date; a scaffold
 * file that exists with other content belongs to the user and is left alone unless `force` is set.
 */
export async function planWrites(root: string, files: readonly RenderedFile[], options: { force?: boolean } = {}): Promise<PlannedWrite[]> {
  const plan: PlannedWrite[] = [];
  for (const file of files) {
    const absolute = resolveInside(root, file.path);
    let current: string | undefined;
    try {
      current = await readFile(absolute, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
    }
    let action: WriteAction;
    if (current === undefined) action = 'create';
    else if (normalizeEol(current) === normalizeEol(file.contents)) action = 'unchanged';
    else if (file.class === 'scaffold' && !options.force) action = 'user-modified';
    else action = 'update';
    plan.push({ ...file, action, current });
  }
  return plan;
}
