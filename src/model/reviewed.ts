import type { Config } from '../config/schema.js';
import type { ReviewedCandidate } from './types.js';

type Located = Pick<Config['actions'][number], 'name' | 'source' | 'route' | 'trigger'>;

/** The same action: the same source location, the same name, or (HTTP) the same route. */
export function covers(action: Located, candidate: Located): boolean {
  if (action.source !== undefined && action.source === candidate.source) return true;
  if (action.name === candidate.name) return true;
  return action.trigger === 'http' && candidate.trigger === 'http' && action.route !== undefined && action.route === candidate.route;
}

/** What init recorded as left out, less what the config protects now (an action added since is no longer "left out"). */
export function stillUnprotected(reviewed: readonly ReviewedCandidate[], actions: readonly Located[]): ReviewedCandidate[] {
  return reviewed.filter((candidate) => !actions.some((action) => covers(action, candidate)));
}
