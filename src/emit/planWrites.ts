import { UserError } from '../errors.js';
import type { RenderedFile } from '../render/renderDocument.js';
import type { FormattedFile } from './format.js';
import { type ManifestEntry, normalizeText, readManifest, sha256Of } from './manifest.js';
import { normalizeRelative, readInside, tryNormalizeRelative } from './safePath.js';

/**
 * create / update / unchanged: what the writer does to a file the design produces.
 * user-modified: the file is the user's now (edited, deleted, or never ours) and is left alone.
 * remove: a managed file the design no longer produces, unchanged since written, so it is deleted.
 * orphan: no longer produced but kept (edited since written, or scaffold code that belongs to the user).
 */
export type WriteAction = 'create' | 'update' | 'unchanged' | 'user-modified' | 'remove' | 'orphan';

export interface PlannedWrite extends FormattedFile {
  action: WriteAction;
  /** What is on disk now (LF-normalized), for --diff; undefined when the file does not exist. */
  current?: string;
  /** Why a file is skipped, overwritten despite edits, or left behind; shown in the report. */
  reason?: string;
  /** The manifest entry from the last run, when the tool wrote this path before. */
  tracked?: ManifestEntry;
  /**
   * A kept, user-edited scaffold file whose generated version is no longer the one the edit started from (the
   * manifest's hash): the document now describes code the project does not have. `generate --check` fails on it.
   */
  behind?: boolean;
  /** The user recorded (`--accept`) that their edited file includes the current generated version. */
  accepted?: boolean;
}

export interface PlanOptions {
  /** Overwrite edited scaffold files, restore deleted ones and remove edited orphans. */
  force?: boolean;
  /** Edited scaffold files (project-relative) whose current generated version the user has merged by hand. */
  accept?: readonly string[];
}

/** Line endings never count as a change: a CRLF checkout of the same content is "unchanged". */
export const normalizeEol = normalizeText;

/** Files carrying this marker were produced by the tool, even when the manifest was lost. */
const MARKER = 'idempotency-builder';

async function readCurrent(root: string, relative: string): Promise<string | undefined> {
  // A folder (or a file where a folder should be) reads as missing and is reported by applyPlan's preflight.
  const text = await readInside(root, relative);
  return text === undefined ? undefined : normalizeText(text);
}

function decide(file: RenderedFile, current: string | undefined, tracked: ManifestEntry | undefined, force: boolean): Pick<PlannedWrite, 'action' | 'reason' | 'behind'> {
  if (file.editOf !== undefined) {
    // An addition to the user's own file: only on top of the exact text it was computed from.
    if (current === file.contents) return { action: 'unchanged' };
    if (current !== undefined && current === normalizeText(file.editOf)) return { action: 'update', reason: 'adds the idempotency store to your file; nothing else in it changes' };
    return { action: 'user-modified', reason: 'changed while generate ran; run it again to add the idempotency store' };
  }
  if (current === undefined) {
    // "Written once": a scaffold file the user deleted after we wrote it stays deleted.
    if (tracked && file.class === 'scaffold' && !force) return { action: 'user-modified', reason: 'deleted since it was generated; --force restores it' };
    return { action: 'create' };
  }
  if (current === file.contents) return { action: 'unchanged' };
  const ours = tracked !== undefined && sha256Of(current) === tracked.sha256;
  if (force) return { action: 'update', ...(ours ? {} : { reason: 'overwritten (--force)' }) };
  if (file.class === 'managed') {
    if (ours) return { action: 'update' };
    if (tracked || current.includes(MARKER)) return { action: 'update', reason: 'edited by hand; generated files are always regenerated' };
    return { action: 'user-modified', reason: 'exists and was not written by idempotency-builder; --force overwrites' };
  }
  if (ours) return { action: 'update' };
  if (tracked && sha256Of(file.contents) !== tracked.sha256) {
    return { action: 'user-modified', behind: true, reason: `edited by you and kept, but its generated version changed since; the document describes the new one (--diff --force shows it; --force takes it; --accept ${file.path} records that your version includes it)` };
  }
  return { action: 'user-modified', reason: tracked ? 'edited since it was generated; --force overwrites' : 'exists and was not written by idempotency-builder; --force overwrites' };
}

/** The generated suite an old suite's path became when only `.test.` ↔ `.spec.` changed, if one was produced. */
function suiteRenamedTo(file: string, produced: ReadonlySet<string>): string | undefined {
  const match = /^(.*)\.(test|spec)(\.[cm]?[jt]s)$/.exec(file);
  if (!match) return undefined;
  const other = `${match[1]}.${match[2] === 'test' ? 'spec' : 'test'}${match[3]}`;
  return produced.has(other) ? other : undefined;
}

/**
 * Compares what would be written with the disk and the manifest. Managed files are brought up to date; a scaffold
 * file is updated only while it still has the hash the tool last wrote. Manifest entries the design no longer
 * produces become orphans: removed when managed and untouched, otherwise left for the user.
 */
export async function planWrites(root: string, files: readonly FormattedFile[], options: PlanOptions = {}): Promise<PlannedWrite[]> {
  const manifest = await readManifest(root);
  const tracked = new Map(manifest.files.map((entry) => [entry.path, entry]));
  const plan: PlannedWrite[] = [];
  for (const rendered of files) {
    const file = { ...rendered, path: normalizeRelative(rendered.path), contents: normalizeText(rendered.contents) };
    const current = await readCurrent(root, file.path);
    const entry = tracked.get(file.path);
    plan.push({ ...file, ...decide(file, current, entry, Boolean(options.force)), current, ...(entry ? { tracked: entry } : {}) });
  }
  acceptEdits(plan, options.accept ?? []);
  const produced = new Set(plan.map((item) => item.path));
  for (const entry of manifest.files) {
    if (produced.has(entry.path)) continue;
    // A hand-edited manifest must never make us touch anything outside the project.
    if (tryNormalizeRelative(entry.path) !== entry.path) continue;
    const current = await readCurrent(root, entry.path);
    if (current === undefined) continue; // Already gone; it simply drops out of the manifest.
    const unchanged = sha256Of(current) === entry.sha256;
    const base = { path: entry.path, class: entry.class, contents: '', current, tracked: entry };
    const renamedTo = suiteRenamedTo(entry.path, produced);
    if (entry.class === 'managed' && (unchanged || options.force)) plan.push({ ...base, action: 'remove', reason: 'no longer generated' });
    // A suite the project's Jest now collects under the other name (x.test.ts ↔ x.spec.ts): the untouched old copy
    // would run twice or linger uncollected, so it goes; an edited one stays, like any scaffold file.
    else if (renamedTo !== undefined && unchanged) plan.push({ ...base, action: 'remove', reason: `renamed to ${renamedTo} (the name the project's test runner collects)` });
    else if (entry.class === 'managed') plan.push({ ...base, action: 'orphan', reason: 'no longer generated; kept because it was edited (--force removes it)' });
    else plan.push({ ...base, action: 'orphan', reason: 'no longer generated; scaffold code is yours, so it stays' });
  }
  return plan;
}

/**
 * `--accept PATH`: the user merged the new generated version into their edited file by hand. The file stays as it
 * is; the manifest will record the current generated version as the one it is based on, so it is no longer behind.
 */
function acceptEdits(plan: PlannedWrite[], accept: readonly string[]): void {
  for (const wanted of accept) {
    const path = normalizeRelative(wanted, 'read');
    const item = plan.find((candidate) => candidate.path === path);
    if (!item || item.action !== 'user-modified' || !item.tracked || item.current === undefined) {
      const candidates = plan.filter((candidate) => candidate.behind).map((candidate) => candidate.path);
      throw new UserError(
        `--accept ${wanted}: not an edited scaffold file the tool generated.`,
        candidates.length > 0 ? `Files that can be accepted: ${candidates.join(', ')}.` : 'No edited scaffold file is behind its generated version; nothing to accept.',
      );
    }
    Object.assign(item, { behind: false, accepted: true, reason: 'edited by you; accepted as including the current generated version' });
  }
}
