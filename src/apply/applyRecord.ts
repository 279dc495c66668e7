import { createHash } from 'node:crypto';
import { STATE_DIR } from '../emit/projectLock.js';
import { readInside } from '../emit/safePath.js';
import type { Edit, ManualStep } from './types.js';

/** What apply did to the user's code, for the next apply (which files are as it left them) and for the document. */
export const APPLY_RECORD_PATH = `${STATE_DIR}/apply.json`;

export interface ActionRecord {
  action: string;
  applied: Array<{ file: string; summary: string }>;
  manual: ManualStep[];
}

export interface ApplyRecord {
  /** sha256 of each file as apply last wrote it. */
  files: Record<string, string>;
  actions: ActionRecord[];
}

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export async function readApplyRecord(root: string): Promise<ApplyRecord> {
  const text = await readInside(root, APPLY_RECORD_PATH).catch(() => undefined);
  if (text === undefined) return { files: {}, actions: [] };
  try {
    const raw = JSON.parse(text) as Partial<ApplyRecord>;
    const files = Object.fromEntries(Object.entries(raw.files ?? {}).filter(([, v]) => typeof v === 'string'));
    const actions = Array.isArray(raw.actions) ? raw.actions.filter((a) => typeof a?.action === 'string' && Array.isArray(a.applied) && Array.isArray(a.manual)) : [];
    return { files, actions };
  } catch {
    return { files: {}, actions: [] };
  }
}

/**
 * The record after this run: edits accumulate per action (a second run that finds everything wired adds none, so
 * the record stays byte-identical); manual steps are this run's, for the actions it looked at.
 */
export function nextApplyRecord(previous: ApplyRecord, run: { actions: string[]; edits: Edit[]; manual: ManualStep[]; written: Record<string, string> }): ApplyRecord {
  const byName = new Map(previous.actions.map((a) => [a.action, a]));
  for (const action of run.actions) {
    const before = byName.get(action)?.applied ?? [];
    const added = run.edits.filter((e) => e.action === action).map((e) => ({ file: e.file, summary: e.summary }));
    const applied = [...before, ...added.filter((a) => !before.some((b) => b.file === a.file && b.summary === a.summary))];
    byName.set(action, { action, applied, manual: run.manual.filter((m) => m.action === action) });
  }
  const actions = [...byName.values()].sort((a, b) => (a.action < b.action ? -1 : a.action > b.action ? 1 : 0));
  const files = Object.fromEntries(Object.entries({ ...previous.files, ...run.written }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { files, actions };
}

export function serializeApplyRecord(record: ApplyRecord): string {
  return `${JSON.stringify({ $comment: 'Written by idempotency-builder apply: the edits it made to your code and the steps left to you. Do not edit.', ...record }, null, 2)}\n`;
}
