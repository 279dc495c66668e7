import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { DocumentFile, Finding } from './types.js';
import { verifyDocument } from './verifyDocument.js';

/** Text files that can be part of a document folder; anything else only needs to exist as a link target. */
const TEXT = /\.(html?|md|markdown|css|svg|txt)$/i;

/**
 * Verifies a document on disk: a single .html/.md file, or a split folder (every file in it).
 * Findings name files as the caller wrote the path, so they can be opened straight from the message.
 */
export async function verifyPath(target: string): Promise<Finding[]> {
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new UserError(`Cannot verify ${target}: no such file or folder.`, 'Pass the document file (e.g. docs/idempotency-design.html) or its split folder.');
  const display = target.replace(/\\/g, '/').replace(/\/+$/, '');
  if (info.isDirectory()) {
    const files = await readFolder(target);
    return verifyDocument(files, { label: `${display}/`, prefix: `${display}/`, folder: true });
  }
  if (!/\.(html?|md|markdown)$/i.test(target)) throw new UserError(`Cannot verify ${target}: expected an .html or .md document, or a split folder.`);
  const dir = path.dirname(target);
  const name = path.basename(target);
  const prefix = path.dirname(display) === '.' && !display.startsWith('./') ? '' : `${path.posix.dirname(display)}/`;
  return verifyDocument([{ path: name, contents: await readFile(target, 'utf8') }], {
    label: display,
    prefix,
    folder: false,
    existsOutside: (relative) => existsSync(path.join(dir, relative)),
  });
}

async function readFolder(root: string): Promise<DocumentFile[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files: DocumentFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const absolute = path.join(entry.parentPath, entry.name);
    const relative = path.relative(root, absolute).split(path.sep).join('/');
    // Non-text files (images someone added) only need to exist; their bytes are not read.
    files.push({ path: relative, contents: TEXT.test(entry.name) ? await readFile(absolute, 'utf8') : '' });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
