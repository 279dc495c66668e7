import { createHash } from 'node:crypto';
import { UserError } from '../errors.js';
import { readInside, tryNormalizeRelative } from './safePath.js';

/** Where the tool remembers what it wrote; commit it so CI and teammates share the ownership record. */
export const MANIFEST_PATH = '.idempotency-builder/manifest.json';

export type FileClass = 'managed' | 'scaffold';

export interface ManifestEntry {
  /** Project-relative POSIX path. */
  path: string;
  class: FileClass;
  /** sha256 hex of the LF-normalized text the tool last wrote. */
  sha256: string;
  /**
   * For formatted files: sha256 of the unformatted text plus the formatter's version and options. While it and the
   * file on disk still match, the disk holds prettier's output and the slow pass is skipped (see formatFiles).
   */
  source?: string;
}

export interface Manifest {
  /** Footer date of the last generation (YYYY-MM-DD), kept while the document is otherwise unchanged. */
  date?: string;
  /**
   * Digest of every input of the last generation (inputsKey.ts), recorded only when every file was written or
   * found unchanged: while it and each file still match, `generate --check` answers without rendering.
   */
  inputs?: string;
  files: ManifestEntry[];
}

/**
 * Line endings and a byte-order mark never count as a change, so a CRLF checkout (git autocrlf) of the same
 * content is "unchanged" and hashes the same.
 */
export const normalizeText = (text: string): string => text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');

export const sha256Of = (text: string): string => createHash('sha256').update(normalizeText(text), 'utf8').digest('hex');

/** The manifest on disk; an empty one when the project has never been generated. */
export async function readManifest(root: string): Promise<Manifest> {
  // Never through a link: a symlinked state folder is refused here, before anything is planned or written.
  const text = await readInside(root, MANIFEST_PATH);
  return text === undefined ? { files: [] } : parseManifest(text);
}

const corrupt = (why: string) =>
  new UserError(
    `${MANIFEST_PATH} is damaged (${why}).`,
    `Restore it from version control, or delete it and run \`idempotency-builder generate\` again (edited scaffold files are then kept, never overwritten).`,
  );

export function parseManifest(text: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw corrupt('not valid JSON');
  }
  const files = (raw as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) throw corrupt('no "files" list');
  const entries = files.map((entry: unknown, index): ManifestEntry => {
    const { path: p, class: c, sha256, source } = (entry ?? {}) as Record<string, unknown>;
    const isHash = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
    if (typeof p !== 'string' || p === '' || (c !== 'managed' && c !== 'scaffold') || !isHash(sha256) || (source !== undefined && !isHash(source))) {
      throw corrupt(`files[${index}] needs path, class "managed" or "scaffold" and a sha256`);
    }
    // `docs/../docs/x.html` and `./x` name the same files as `docs/x.html` and `x`: one spelling, so a hand-edited
    // entry can never look like an orphan of the file it names (and get it deleted). Paths leaving the project
    // are kept as written; planWrites never touches them.
    return { path: tryNormalizeRelative(p) ?? p, class: c, sha256, ...(isHash(source) ? { source } : {}) };
  });
  const seen = new Set<string>();
  const unique = entries.filter((entry) => !seen.has(entry.path) && seen.add(entry.path));
  const { date, inputs } = raw as { date?: unknown; inputs?: unknown };
  return {
    ...(typeof date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(date) ? { date } : {}),
    // Anything else is ignored (never an error): the key only ever saves work.
    ...(typeof inputs === 'string' && /^[0-9a-f]{64}$/.test(inputs) ? { inputs } : {}),
    files: unique,
  };
}

/** Sorted, two-space JSON with a final newline: byte-identical for the same inputs on any machine. */
export function serializeManifest(manifest: Manifest): string {
  const files = [...manifest.files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((entry) => ({ path: entry.path, class: entry.class, sha256: entry.sha256, ...(entry.source ? { source: entry.source } : {}) }));
  const body = { $comment: 'Written by idempotency-builder: what it generated and the hash it wrote. Commit this file.', ...(manifest.date ? { date: manifest.date } : {}), ...(manifest.inputs ? { inputs: manifest.inputs } : {}), files };
  return `${JSON.stringify(body, null, 2)}\n`;
}
