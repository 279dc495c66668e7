import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { readSnapshot } from '../emit/protectionSnapshot.js';
import { unifiedDiff } from '../emit/unifiedDiff.js';
import { buildDesign } from '../model/index.js';
import { APPLY_RECORD_PATH, nextApplyRecord, serializeApplyRecord, sha256 } from './applyRecord.js';
import { formatChanges } from './formatChanges.js';
import { lintChanges } from './lintChanges.js';
import { withTransactionalModes } from './claimWrites.js';
import { movedSources, movedSteps } from './movedSources.js';
import { planApply, type FileChange } from './planApply.js';
import type { Edit, ManualStep } from './types.js';
import { writeChanges } from './writeChanges.js';
import { readInside } from '../emit/safePath.js';

export type { FileChange } from './planApply.js';
export type { Edit, ManualStep } from './types.js';

export interface ApplyOptions {
  cwd: string;
  config?: string;
  action?: string;
  /** Decides whether the planned changes are written: --yes answers true, a prompt asks, --dry-run/--diff false. */
  confirm: (preview: ApplyPreview) => Promise<boolean>;
  signal?: AbortSignal;
  now?: () => Date;
}

export interface ApplyPreview {
  /** Changes to the user's code (and the instance module), formatted, each with its unified diff. */
  changes: Array<FileChange & { diff: string }>;
  edits: Edit[];
  manual: ManualStep[];
  /** Files that moved on since the inspection: apply refuses to touch anything while there are any. */
  stale: string[];
  /**
   * The config with `moved` action sources following the lines the changes move, and "mode": "transactional" for the
   * `transactional` actions whose writes apply moved onto the claim's transaction; written with them.
   */
  sources?: FileChange & { moved: number; transactional?: string[] };
}

export interface ApplyResult extends ApplyPreview {
  written: boolean;
}

/**
 * Plans every edit in memory, shows it (the caller prints the preview), and writes only what was confirmed, together
 * with the apply record. A second run over its own output plans nothing and writes nothing.
 */
export async function applyWiring(options: ApplyOptions): Promise<ApplyResult> {
  const root = path.resolve(options.cwd);
  const { config, file: configFile, text: configText } = await loadConfig(root, options.config);
  const snapshot = await readSnapshot(root);
  const model = buildDesign(config, snapshot.inspection, { now: (options.now ?? (() => new Date()))(), ...(snapshot.codeFindings ? { findings: snapshot.codeFindings } : {}), ...(snapshot.actionFacts ? { code: snapshot.actionFacts } : {}), ...(snapshot.brokers ? { brokers: snapshot.brokers } : {}), ...(snapshot.forms ? { forms: snapshot.forms } : {}) });
  const plan = await planApply(root, { config, model, ...(options.action !== undefined ? { action: options.action } : {}) });
  const formatted = await lintChanges(root, await formatChanges(root, plan.changes));
  const changes = formatted.filter((c) => c.after !== c.before).map((c) => ({ ...c, diff: unifiedDiff(c.before, c.after, { path: c.path }) }));
  // The config's sources follow the lines apply moved, written with the code so `audit` and `init` read the same
  // functions afterwards.
  const configPath = path.relative(root, configFile).split(path.sep).join('/');
  const inside = !(configPath.startsWith('..') || path.isAbsolute(configPath));
  const moved = inside ? movedSources(configText, config.actions, changes) : undefined;
  // Handlers whose writes now run on the claim's transaction get "mode": "transactional", written with the code.
  const modes = inside && plan.transactional.length > 0 ? withTransactionalModes(moved?.text ?? configText, plan.transactional) : undefined;
  const sources = (moved || modes) && { path: configPath, before: configText, after: modes ?? moved!.text, moved: moved?.count ?? 0, ...(modes ? { transactional: plan.transactional } : {}) };
  const unplaced: ManualStep[] = [];
  if (plan.transactional.length > 0 && !modes) {
    for (const action of plan.transactional) unplaced.push({ action, reason: `set "mode": "transactional" for ${action} in ${configPath} by hand (apply could not place it in the file's text), then run generate: until then its statements run on the pool, in lease mode` });
  }
  // Formatting may move lines: the findings listed point at the text as written.
  const manual = [...(formatted.some((c, i) => c.after !== plan.changes[i]?.after) ? plan.relist(formatted) : plan.manual), ...unplaced];
  const preview: ApplyPreview = { changes, edits: plan.edits, manual: movedSteps(manual, config.actions, changes), stale: plan.stale, ...(sources ? { sources } : {}) };
  if (plan.stale.length > 0) return { ...preview, written: false };
  const written = Object.fromEntries(changes.map((c) => [c.path, sha256(c.after)]));
  const record = serializeApplyRecord(nextApplyRecord(plan.record, { actions: plan.actions, edits: plan.edits, manual: preview.manual, written }));
  const recordBefore = await readInside(root, APPLY_RECORD_PATH).catch(() => undefined);
  // With no code to change, the record is left alone once it covers these actions: line numbers in manual steps
  // move with the lines apply itself added, and a second run must write nothing.
  const covered = plan.actions.every((name) => plan.record.actions.some((a) => a.action === name));
  if (changes.length === 0 && (record === recordBefore || covered)) return { ...preview, written: false };
  if (!(await options.confirm(preview))) return { ...preview, written: false };
  await writeChanges(root, [...changes, ...(sources ? [sources] : []), ...(record === recordBefore ? [] : [{ path: APPLY_RECORD_PATH, ...(recordBefore !== undefined ? { before: recordBefore } : {}), after: record }])], options.signal);
  return { ...preview, written: true };
}
