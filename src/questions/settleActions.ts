import type { Inspection, RouteAuthentication } from '../inspect/types.js';
import { WHERE_LOOKED } from '../inspect/routeAuthenticationScope.js';
import { actionForms } from '../model/actionForms.js';
import { actionsFromInspection } from './actionsFromInspection.js';
import type { ActionAnswer } from './types.js';
import { fewNames, sentenceNaming } from '../model/labels.js';

/**
 * The last word on the chosen actions, whatever answered them (flag, config, inspection, prompt): facts the code
 * states that the answer left out.
 * - transport: an HTTP action that inspection found as a GraphQL mutation, tRPC procedure or Server Action (same
 *   route, or same source) is marked so, since its route names it and no request goes to that path.
 * - scope: an HTTP action without one, in a package whose code was read and where nothing authenticates callers,
 *   is keyed globally: there is no principal to scope its keys to, and a per-user scope would refuse every request.
 * - scope, per route: an Express, Koa, Fastify or Hono route nothing authenticates (a sign-up in an app that signs
 *   callers in elsewhere; inspection read its middleware, its router's and its mount's) is keyed globally too, and so
 *   is a Server Action whose code and builder read no session.
 * - key field: an HTTP route a server-rendered form posts to (a Pug, EJS, Handlebars or Nunjucks view) takes its key
 *   from a hidden `idempotencyKey` field the page is rendered with, since a browser form cannot send a header.
 * A transport, scope or key the answer sets is kept.
 */
export function settleActions(actions: readonly ActionAnswer[], inspection: Inspection): { actions: ActionAnswer[]; assumption?: string; routeAssumptions?: string[]; formAssumption?: string } {
  const rpc = actionsFromInspection(inspection).filter((c) => c.action.transport !== undefined);
  const global: string[] = [];
  const publicRoutes: string[] = [];
  const publicActions: string[] = [];
  const publicNextRoutes: string[] = [];
  const posted: string[] = [];
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
    } else if (!result.scope && routeAuthenticationOf(inspection, action.source, action.route)?.by.length === 0) {
      result = { ...result, scope: 'global' };
      (result.transport === 'server-action' ? publicActions : NEXT_ROUTE_FILE.test(action.source ?? '') ? publicNextRoutes : publicRoutes).push(action.name);
    }
    const forms = result.transport === undefined && result.key === undefined ? actionForms([result], inspection.findings)[result.name] : undefined;
    if (forms) {
      result = { ...result, key: { source: 'server', field: FORM_KEY_FIELD } };
      posted.push(action.name);
    }
    return result;
  });
  const named = fewNames(posted);
  const formAssumption = posted.length === 0 ? undefined : `Server-rendered forms post to ${named}. A browser form cannot send an Idempotency-Key header, so ${posted.length === 1 ? 'its key comes' : 'their keys come'} from a hidden ${FORM_KEY_FIELD} field the page is rendered with, one per rendered form ("key": { "source": "server", "field": "${FORM_KEY_FIELD}" }). Unless the config chose otherwise, "inFlight" is "wait": a double submit gets the first request's answer, not a 409.`;
  const routeAssumption = publicRoutes.length === 0 ? undefined : sentenceNaming(publicRoutes, (names) => `Nothing authenticates the route${publicRoutes.length === 1 ? '' : 's'} of ${names} (inspection looked at ${WHERE_LOOKED}), so there is no caller to scope ${publicRoutes.length === 1 ? 'its' : 'their'} keys to: ${publicRoutes.length === 1 ? 'its keys are' : 'their keys are'} global ("scope": "global"), where a per-user scope would answer every request 401. Put your auth middleware before the route and set "scope": "user" if it serves signed-in callers.`);
  const actionAssumption = publicActions.length === 0 ? undefined : sentenceNaming(publicActions, (names) => `Nothing in the Server Action${publicActions.length === 1 ? '' : 's'} ${names} reads the session (neither ${publicActions.length === 1 ? 'its' : 'their'} own code nor the function that builds ${publicActions.length === 1 ? 'it' : 'them'}, nor what either calls), and Next.js serves every Server Action as a public endpoint, so there is no caller to scope ${publicActions.length === 1 ? 'its' : 'their'} keys to: ${publicActions.length === 1 ? 'its keys are' : 'their keys are'} global ("scope": "global"), where a per-user scope would refuse every call (a sign-up has no user yet). Set "scope": "user" if ${publicActions.length === 1 ? 'it serves' : 'they serve'} signed-in callers only.`);
  const one = publicNextRoutes.length === 1;
  const nextAssumption = publicNextRoutes.length === 0 ? undefined : sentenceNaming(publicNextRoutes, (names) => `Nothing in the Next.js route handler${one ? '' : 's'} of ${names} reads the session (in ${one ? 'its' : 'their'} own code or the functions ${one ? 'it hands' : 'they hand'} the request to), and no middleware.ts or proxy.ts that could check it runs for ${one ? 'it' : 'them'} (none exists, or its matcher leaves ${one ? 'the route' : 'them'} out). With no caller to scope keys to, ${one ? 'its keys are' : 'their keys are'} global ("scope": "global"); a per-user scope would answer every request 401. Set "scope": "user" if ${one ? 'it serves' : 'they serve'} signed-in callers only.`);
  // One assumption each: together they would pass the config's length limit for one text.
  const routeAssumptions = [routeAssumption, nextAssumption, actionAssumption].filter((text): text is string => text !== undefined);
  const routes = { ...(routeAssumptions.length > 0 ? { routeAssumptions } : {}), ...(formAssumption ? { formAssumption } : {}) };
  if (global.length === 0) return { actions: settled, ...routes };
  return {
    actions: settled,
    ...routes,
    assumption: `Nothing in the code authenticates callers (no passport, JWT, session, Clerk, NextAuth or guard, and nothing sets req.user), so ${global.join(', ')} ${global.length === 1 ? 'has' : 'have'} no principal to scope keys to: ${global.length === 1 ? 'its keys are' : 'their keys are'} global ("scope": "global"), shared by every caller. Set "scope": "user" once requests are authenticated.`,
  };
}

/** A Next.js route handler's file: an App Router route.ts or a Pages API route. */
const NEXT_ROUTE_FILE = /(^|\/)(app\/(.*\/)?route\.[cm]?[jt]sx?|pages\/api\/.*)(:\d+)?$/;

/** The hidden form field a server-rendered form posts its key in (what apply writes into the templates). */
export const FORM_KEY_FIELD = 'idempotencyKey';

/** What authenticates the package the action's source lives in (its workspace package, else the repository); undefined when unknown. */
function authenticationFor(inspection: Inspection, source: string | undefined): string[] | undefined {
  const file = source?.replace(/:\d+$/, '');
  const pkg = file === undefined ? undefined : inspection.stack.packages?.filter((p) => file.startsWith(`${p.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0];
  return pkg ? pkg.stack.authentication : inspection.stack.authentication;
}

/** What inspection read authenticating the action's route (its source's route registration, else its method and path). */
function routeAuthenticationOf(inspection: Inspection, source: string | undefined, route: string | undefined): RouteAuthentication | undefined {
  const match = source === undefined ? undefined : /^(.+?):(\d+)$/.exec(source);
  const routes = inspection.routeAuthentication ?? [];
  const at = match ? routes.filter((r) => r.file === match[1] && r.line === Number(match[2])) : [];
  const found = at.length > 0 ? at : routes.filter((r) => route !== undefined && `${r.method} ${r.path}` === route && (match === null || match === undefined || r.file === match[1]));
  // One registration may serve several paths (mounted twice): keyed globally only when none of them is authenticated.
  if (found.length === 0) return undefined;
  return found.some((r) => r.by.length > 0) ? found.find((r) => r.by.length > 0) : found[0];
}
