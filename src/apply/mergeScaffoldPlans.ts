import type { FindingDesign } from '../model/findings.js';
import type { FileChange } from './planApply.js';
import type { Edit, ManualStep } from './types.js';

/** What apply plans for one scaffold (one package of a monorepo, or the project's only one). */
export interface ScaffoldPlan {
  /** The scaffold folder, relative to the project root. */
  dir: string;
  changes: FileChange[];
  edits: Edit[];
  manual: ManualStep[];
  stale: string[];
  transactional: string[];
  /** Every file this part read as a target, as read and as wired (for relocateFindings). */
  texts: Array<{ path: string; before: string; after: string }>;
  /** Which of `manual` are recorded findings. */
  findings: Map<ManualStep, FindingDesign>;
  /** Where the thread pass said in its own step why a provider call is not keyed (`file:line`). */
  specificAt: Set<string>;
}

export const emptyScaffoldPlan = (dir: string): ScaffoldPlan => ({ dir, changes: [], edits: [], manual: [], stale: [], transactional: [], texts: [], findings: new Map(), specificAt: new Set() });

/**
 * The parts of a monorepo's apply in one plan, in scaffold order. Files belong to one package, so two scaffolds never
 * edit the same file; if they ever did, the later edit would silently drop the earlier one, so that is a bug to
 * report, not something to merge (the same text from both is kept once).
 */
export function mergeScaffoldPlans(parts: readonly ScaffoldPlan[]): ScaffoldPlan {
  if (parts.length === 1) return parts[0]!;
  const merged = emptyScaffoldPlan(parts.map((part) => part.dir).join(', '));
  const changedBy = new Map<string, { dir: string; change: FileChange }>();
  for (const part of parts) {
    for (const change of part.changes) {
      const earlier = changedBy.get(change.path);
      if (earlier === undefined) {
        changedBy.set(change.path, { dir: part.dir, change });
        merged.changes.push(change);
      } else if (earlier.change.after !== change.after || earlier.change.before !== change.before) {
        throw new Error(`two scaffolds would both change ${change.path} (${earlier.dir} and ${part.dir}); apply keeps each package's edits apart and cannot merge these`);
      }
    }
    merged.edits.push(...part.edits);
    merged.manual.push(...part.manual);
    merged.stale.push(...part.stale);
    merged.transactional.push(...part.transactional);
    for (const text of part.texts) {
      const index = merged.texts.findIndex((t) => t.path === text.path);
      if (index === -1) merged.texts.push(text);
      else if (merged.texts[index]!.after === merged.texts[index]!.before) merged.texts[index] = text;
    }
    for (const [step, finding] of part.findings) merged.findings.set(step, finding);
    for (const at of part.specificAt) merged.specificAt.add(at);
  }
  return merged;
}
