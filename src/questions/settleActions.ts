import type { Inspection } from '../inspect/types.js';
import { actionsFromInspection } from './actionsFromInspection.js';
import type { ActionAnswer } from './types.js';

/**
 * The last word on the chosen actions, whatever answered them (flag, config, inspection, prompt): facts the code
 * states that the answer left out.
 * - transport: an HTTP action that inspection found as a GraphQL mutation, tRPC procedure or Server Action (same
 *   route, or same source) is marked so, since its route names it and no request goes to that path.
 * - scope: an HTTP action without one, in a package whose code was read and where nothing authenticates callers,
 *   is keyed globally: there is no principal to scope its keys to, and a per-user scope would refuse every request.
 * A transport or scope the answer sets is kept.
 */
export function settleActions(actions: readonly ActionAnswer[], inspection: Inspection): { actions: ActionAnswer[]; assumption?: string } {
  const rpc = actionsFromInspection(inspection).filter((c) => c.action.transport !== undefined);
  const global: string[] = [];
  const settled = actions.map((action) => {
    if (action.trigger !== 'http') return action;
    let result = action;
    if (!result.transport) {
      const found = rpc.find((c) => (action.route !== undefined && c.action.route === action.route) || (action.source !== undefined && c.action.source === action.source));
      if (found) result = { ...result, transport: found.action.transport };
    }
    if (!result.scope && authenticationFor(inspection, action.source)?.length === 0) {
      result = { ...result, scope: 'global' };
      global.push(action.name);
    }
    return result;
  });
  if (global.length === 0) return { actions: settled };
  return {
    actions: settled,
    assumption: `Nothing in the code authenticates callers (no passport, JWT, session, Clerk, NextAuth or guard, and nothing sets req.user), so ${global.join(', ')} ${global.length === 1 ? 'has' : 'have'} no principal to scope keys to: ${global.length === 1 ? 'its keys are' : 'their keys are'} global ("scope": "global"), shared by every caller. Set "scope": "user" once requests are authenticated.`,
  };
}

/** What authenticates the package the action's source lives in (its workspace package, else the repository); undefined when unknown. */
function authenticationFor(inspection: Inspection, source: string | undefined): string[] | undefined {
  const file = source?.replace(/:\d+$/, '');
  const pkg = file === undefined ? undefined : inspection.stack.packages?.filter((p) => file.startsWith(`${p.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0];
  return pkg ? pkg.stack.authentication : inspection.stack.authentication;
}
