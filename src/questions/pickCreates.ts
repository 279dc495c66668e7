import { isAuthRoute, rpcMethod, type ActionCandidate } from './actionsFromInspection.js';
import type { ActionAnswer } from './types.js';

/** A design that names more than a handful of routes is one nobody reviews; the rest stay in the config's reach. */
export const MAX_PICKED = 5;

/**
 * The actions `init` protects when nothing it found is obviously harmful to repeat (a plain CRUD app): up to five
 * POST handlers that create something, so the design and the scaffold name the user's real endpoints instead of a
 * placeholder. Ranked by what inspection knows: a payment, then a webhook, then a route whose code sends a message to
 * a person, then a POST whose code inserts a record, then any other POST route (a Server Action or procedure only
 * when named like a create); inspection order within a rank. Sign-in
 * routes and idempotent methods (also RPC mutations named like them: deletePost) are never picked unless they send a
 * message.
 */
export function pickCreates(candidates: readonly ActionCandidate[]): ActionAnswer[] {
  return candidates
    .map((candidate, index) => ({ candidate, index, rank: rankOf(candidate) }))
    .filter((entry): entry is { candidate: ActionCandidate; index: number; rank: number } => entry.rank !== undefined)
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .filter(within(MAX_PICKED))
    .map(({ candidate }) => candidate.action);
}

/**
 * At most `max` routes. Handlers that serve one route (alternative controllers of one upload endpoint, chosen by
 * configuration at boot) count once and are all kept: whichever the app runs is protected.
 */
function within(max: number): (entry: { candidate: ActionCandidate }) => boolean {
  const routes = new Set<string>();
  return ({ candidate }) => {
    const route = candidate.action.route ?? candidate.action.name;
    if (routes.has(route)) return true;
    if (routes.size >= max) return false;
    routes.add(route);
    return true;
  };
}

/** Lower is more worth protecting; undefined: not a create. */
function rankOf(candidate: ActionCandidate): number | undefined {
  // Its answer is a stream the route wrappers would hold back until it ends: not a route to protect blind.
  if (candidate.streamsResponse) return undefined;
  if (candidate.group === 'Touches payments') return 0;
  if (candidate.group === 'Webhooks') return 1;
  // A message to a person, whatever the method or route: a second copy reaches someone (a sign-in by e-mail link too).
  if (candidate.action.trigger === 'http' && candidate.sendsMessage) return 2;
  const [method, path] = (candidate.action.route ?? '').split(' ');
  if (candidate.action.trigger !== 'http' || method !== 'POST' || path === undefined || isAuthRoute(path)) return undefined;
  // A mutation or procedure that deletes or sets by its name is as idempotent as DELETE or PUT.
  if (rpcMethod(path, candidate.action.transport)) return undefined;
  if (candidate.insertsRecord) return 3;
  // A Server Action or procedure says what it does by its name: only one named like a create is worth guarding
  // blind (saveChatModelAsCookie and generateTitle are not); a plain POST route is a create by convention.
  return candidate.action.transport === undefined || CREATE_VERB.test(path.split(/[/.#]/).filter(Boolean).pop() ?? '') ? 4 : undefined;
}

const CREATE_VERB = /^(create|add|new|insert|register|signup|submit|place|book|send|post|upload|import|invite|make|open|start|issue|publish|request|reserve|order|checkout|pay|charge|transfer|buy|purchase|donate|enrol|join|subscribe|apply|claim|redeem)(?![a-z])/;
