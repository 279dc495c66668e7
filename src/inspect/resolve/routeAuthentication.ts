import type { GuardRef, OwnerInfo, RawRoute } from '../detectors/detectorTypes.js';
import { namedLikeAuth } from '../detectors/routeGuards.js';
import type { FunctionFacts } from '../parse/indexSource.js';
import type { FunctionGraph } from './functionGraph.js';
import type { ProjectRecords } from './projectRecords.js';
import { middlewareCovers } from './nextMatcher.js';
import { ownerKey } from './resolveModules.js';

/** What a Next.js middleware.ts reads when it may turn away callers without a session (next-auth, Clerk, Supabase, a JWT). */
const MIDDLEWARE_AUTH = /auth|session|token|clerk|jwt|supabase|cookies/i;

/** What authenticates a route: the middleware that does (by their text), `'none'` when nothing does, `'unknown'` when the reader cannot tell. */
export type Authentication = { by: string[] } | 'none' | 'unknown';

export interface GuardedMount {
  parent: string;
  /** The file the mount is written in: its guards' names are resolved from there. */
  file: string;
  guards?: GuardRef[];
}

/**
 * Composes a route's own guards with its router's mounts up to an application (the inspector's mount table), each
 * middleware decided by what it is (routeGuards.ts): its package, the body of the function it names (followed across
 * imports by the function graph), then its name. Anything the reader cannot decide (a mount it cannot see, a
 * middleware from an unknown package with a neutral name) makes the answer 'unknown', never 'none'.
 */
export function routeAuthenticationReader(records: ProjectRecords, graph: FunctionGraph, owners: ReadonlyMap<string, OwnerInfo>, mountsByChild: ReadonlyMap<string, readonly GuardedMount[]>) {
  const decide = (guard: GuardRef, file: string): 'auth' | 'other' | 'router' | 'unknown' => {
    if (guard.verdict) return guard.verdict;
    if (guard.ref !== undefined && owners.has(ownerKey(records, { file, name: guard.ref }))) return 'router';
    const functions = guard.key === undefined ? [] : graph.resolve(file, guard.key);
    if (functions.some((fn) => fn.authenticates)) return 'auth';
    if (guard.name !== undefined && namedLikeAuth(guard.name)) return 'auth';
    return functions.length > 0 ? 'other' : 'unknown';
  };
  const ofGuards = (guards: readonly GuardRef[] | undefined, file: string): Authentication => {
    if (guards === undefined) return 'unknown';
    const verdicts = guards.map((g) => decide(g, file));
    const by = guards.filter((_, i) => verdicts[i] === 'auth').map((g) => g.text);
    if (by.length > 0) return { by };
    return verdicts.includes('unknown') ? 'unknown' : 'none';
  };
  /** Guards before `own`, then `rest`: authenticated if either authenticates; 'none' only when both are known to be empty. */
  const then = (own: Authentication, rest: () => Authentication): Authentication => {
    if (typeof own === 'object') return own;
    const outer = rest();
    if (typeof outer === 'object') return outer;
    return own === 'unknown' || outer === 'unknown' ? 'unknown' : 'none';
  };
  const cache = new Map<string, Authentication>();
  const ofOwner = (key: string, visiting: Set<string>): Authentication => {
    const cached = cache.get(key);
    if (cached) return cached;
    const mounts = mountsByChild.get(key) ?? [];
    if (mounts.length === 0) return owners.get(key)?.root === true ? 'none' : 'unknown';
    if (visiting.has(key)) return 'unknown';
    visiting.add(key);
    const each = mounts.map((m) => then(ofGuards(m.guards, m.file), () => ofOwner(m.parent, visiting)));
    visiting.delete(key);
    // Mounted twice, once behind auth and once not: no single answer.
    const result: Authentication = each.every((a) => typeof a === 'object') ? { by: [...new Set(each.flatMap((a) => (typeof a === 'object' ? a.by : [])))] } : each.every((a) => a === 'none') ? 'none' : 'unknown';
    cache.set(key, result);
    return result;
  };
  /**
   * A handler that authenticates in its own code or in a function it calls (`const { user } = await getSession(c)`,
   * which answers 401 without a session): what does, by name; undefined when neither does.
   */
  const inHandler = (route: RawRoute): string | undefined => {
    for (const key of route.handlerKeys) {
      for (const fn of graph.resolve(route.file, key)) {
        if (fn.authenticates) return `${route.handler ?? 'the handler'} (in its own code)`;
        for (const callee of fn.callees) {
          if (graph.resolve(fn.file, callee).some((c) => c.authenticates)) return `${asWritten(fn, callee)}() in ${route.handler ?? 'the handler'}`;
        }
      }
    }
    return undefined;
  };
  /** A callee key (lower case) as the caller's code spells it: `getsession` → `getSession`. */
  const asWritten = (fn: FunctionFacts, callee: string): string => {
    const text = records.files.get(fn.file)?.text.slice(fn.start, fn.end) ?? '';
    const at = text.toLowerCase().indexOf(callee);
    return at < 0 ? callee : text.slice(at, at + callee.length);
  };
  /** The callees of a function and of the functions written inside it (a builder's returned wrapper). */
  const calleesWithin = (fn: FunctionFacts): Array<{ fn: FunctionFacts; callee: string }> => {
    const inside = [...(records.files.get(fn.file)?.functions.values() ?? [])].filter((f) => f.start >= fn.start && f.end <= fn.end);
    return [fn, ...inside.filter((f) => f !== fn)].flatMap((f) => [...f.callees].map((callee) => ({ fn: f, callee })));
  };
  /**
   * A Next.js Server Action: every one is a public POST endpoint whatever middleware.ts matches (Next.js says to check
   * the session inside each), so only the code it runs can authenticate it: the function that builds it
   * (`validatedActionWithUser(schema, fn)`, `authActionClient.action(fn)`) or a function that one calls, else its own
   * function or one it calls.
   */
  const serverAction = (route: RawRoute): Authentication => {
    for (const guard of route.guards ?? []) {
      const verdict = decide(guard, route.file);
      if (verdict === 'auth') return { by: [guard.text] };
      const builders = guard.key === undefined ? [] : graph.resolve(route.file, guard.key);
      for (const builder of builders) {
        for (const { fn, callee } of calleesWithin(builder)) {
          if (graph.resolve(fn.file, callee).some((c) => c.authenticates)) return { by: [`${asWritten(fn, callee)}() in ${guard.name ?? guard.text}`] };
        }
      }
      if (verdict === 'unknown') return 'unknown';
    }
    const inside = inHandler(route);
    return inside === undefined ? 'none' : { by: [inside] };
  };
  /**
   * A Next.js route handler (App Router route.ts, Pages API route): no per-route middleware, so its own code or what it
   * calls authenticates it (`throwIfNoTeamAccess(req, res)` in the handlePOST its method switch calls); otherwise
   * public, unless a middleware.ts that may check the session covers the app, which the reader does not evaluate.
   */
  const nextRoute = (route: RawRoute): Authentication => {
    const inside = inHandler(route);
    if (inside !== undefined) return { by: [inside] };
    const pkg = records.files.get(route.file)?.pkgDir ?? '';
    // Next.js 16 renamed middleware.ts to proxy.ts (same place, same config.matcher).
    const middleware = ['middleware', 'src/middleware', 'proxy', 'src/proxy'].flatMap((base) => ['ts', 'js', 'mjs'].map((ext) => `${pkg === '' ? '' : `${pkg}/`}${base}.${ext}`)).map((rel) => records.files.get(rel)).find((record) => record !== undefined);
    // A middleware whose matcher leaves this path out does not run for it (`/((?!api|_next/static).*)`).
    return middleware && MIDDLEWARE_AUTH.test(middleware.text) && middlewareCovers(middleware.text, route.path) !== false ? 'unknown' : 'none';
  };
  return (route: RawRoute, framework: string): Authentication => {
    if (route.transport === 'server-action') return serverAction(route);
    if (framework === 'nextjs' && route.transport === undefined) return nextRoute(route);
    if (!route.owner || !['express', 'koa', 'fastify', 'hono'].includes(framework)) return 'unknown';
    const around = then(ofGuards(route.guards, route.file), () => ofOwner(ownerKey(records, route.owner!), new Set()));
    if (around !== 'none') return around;
    // No middleware authenticates: a public route, unless its handler refuses anonymous callers itself.
    const inside = inHandler(route);
    return inside === undefined ? 'none' : { by: [inside] };
  };
}
