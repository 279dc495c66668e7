import path from 'node:path';
import { FindingsError } from '../errors.js';
import { formatFinding, type DocumentFile } from './types.js';
import { verifyDocument } from './verifyDocument.js';

/**
 * Verifies the document files generate is about to write (project-relative paths): one file, or a
 * split folder's files. Throws FindingsError (exit 1) listing every failure.
 */
export function assertDocumentVerified(files: readonly DocumentFile[]): void {
  if (files.length === 0) return;
  const folder = files.length > 1;
  const root = folder ? commonFolder(files.map((f) => f.path)) : path.posix.dirname(files[0]!.path);
  const prefix = root === '.' || root === '' ? '' : `${root}/`;
  const relative = files.map((f) => ({ path: f.path.slice(prefix.length), contents: f.contents }));
  const findings = verifyDocument(relative, { label: folder ? prefix : files[0]!.path, prefix, folder });
  if (findings.length > 0) {
    throw new FindingsError(
      `The generated document failed verification (${findings.length} problem${findings.length === 1 ? '' : 's'}); nothing was written. This is a bug in idempotency-builder; please report it.`,
      findings.map(formatFinding),
    );
  }
}

function commonFolder(paths: readonly string[]): string {
  const split = paths.map((p) => p.split('/').slice(0, -1));
  const first = split[0] ?? [];
  let length = first.length;
  for (const parts of split) {
    let i = 0;
    while (i < length && parts[i] === first[i]) i++;
    length = i;
  }
  return first.slice(0, length).join('/');
}
