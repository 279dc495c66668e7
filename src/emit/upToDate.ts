import { splitFolder } from '../render/split/splitFolder.js';
import { inputsKey, type GenerationInputs } from './inputsKey.js';
import { normalizeText, readManifest, sha256Of, type Manifest } from './manifest.js';
import type { PlannedWrite } from './planWrites.js';
import { SNAPSHOT_PATH } from './protectionSnapshot.js';
import { readInside } from './safePath.js';

export interface UpToDate {
  /** Every generated file, unchanged. */
  plan: PlannedWrite[];
  /** The footer date the files carry. */
  date: string;
  /** The document as generate reports it: the single file, or the split folder with a trailing slash. */
  document: string;
}

/**
 * The shortcut for the common CI case (`--check`, or a rerun, with nothing changed): when the manifest's inputs key
 * equals the key of this run's inputs and every file the manifest lists is on disk exactly as written, a full run
 * would find every file unchanged, so the answer comes from the manifest without validating, rendering, formatting
 * or laying out anything. Any doubt (no key, a key from another build, date or config, an edited or missing file)
 * returns undefined and the caller takes the full path.
 */
export async function upToDateByInputs(root: string, inputs: Omit<GenerationInputs, 'date' | 'files' | 'snapshot'> & { date?: string }): Promise<UpToDate | undefined> {
  const manifest = await readManifest(root);
  const date = inputs.date ?? manifest.date;
  if (!manifest.inputs || !date || manifest.files.length === 0) return undefined;
  const snapshot = (await readInside(root, SNAPSHOT_PATH).catch(() => undefined)) ?? '';
  const key = await inputsKey(root, { ...inputs, snapshot: normalizeText(snapshot), date, files: manifest.files.map((entry) => entry.path) });
  if (key !== manifest.inputs) return undefined;
  const plan = await unchangedPlan(root, manifest, inputs.output);
  if (!plan) return undefined;
  const document = plan.some((item) => item.path === inputs.output) ? inputs.output : `${splitFolder(inputs.output)}/`;
  return { plan, date, document };
}

/**
 * Every manifest file as an unchanged write (the document first, the snapshot last, as a full run lists them), or
 * undefined when one is missing or differs from what was written.
 */
async function unchangedPlan(root: string, manifest: Manifest, output: string): Promise<PlannedWrite[] | undefined> {
  const plan: PlannedWrite[] = [];
  for (const entry of manifest.files) {
    const text = await readInside(root, entry.path).catch(() => undefined);
    if (text === undefined || sha256Of(text) !== entry.sha256) return undefined;
    const contents = normalizeText(text);
    plan.push({ path: entry.path, class: entry.class, contents, current: contents, action: 'unchanged', tracked: entry, ...(entry.source ? { source: entry.source } : {}) });
  }
  const folder = `${splitFolder(output)}/`;
  const rank = (item: PlannedWrite) => (item.path === output || item.path.startsWith(folder) ? 0 : item.path === SNAPSHOT_PATH ? 2 : 1);
  return plan.sort((a, b) => rank(a) - rank(b) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
