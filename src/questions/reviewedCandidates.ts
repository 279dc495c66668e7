import { covers } from '../model/reviewed.js';
import type { ReviewedCandidate } from '../model/types.js';
import type { ActionCandidate } from './actionsFromInspection.js';
import type { ActionAnswer } from './types.js';

/**
 * The candidates inspection offered that the chosen actions do not cover, each with the reason it was left out, for
 * the design to name: a reader of the document sees every mutating endpoint, consumer and job that was looked at.
 */
export function reviewedCandidates(candidates: readonly ActionCandidate[], chosen: readonly ActionAnswer[]): ReviewedCandidate[] {
  const entries: ReviewedCandidate[] = [];
  for (const { action, note, checked } of candidates) {
    if (action.source === undefined || chosen.some((c) => covers(c, action))) continue;
    entries.push({
      name: action.name,
      trigger: action.trigger,
      ...(action.route !== undefined ? { route: action.route } : {}),
      ...(action.transport !== undefined ? { transport: action.transport } : {}),
      source: action.source,
      reason: checked ? `left out when the actions were chosen, though init pre-selected it${note ? ` (${note})` : ''}` : (note ?? 'not pre-selected at init'),
    });
  }
  return entries;
}
