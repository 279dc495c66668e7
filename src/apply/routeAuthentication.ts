import type { RouteAuthentication } from '../inspect/types.js';
import type { WiringTarget } from './types.js';

/** What authenticates a target's route, as the inspection read it; undefined when it could not tell. */
export type RouteAuthenticationOf = (target: WiringTarget) => RouteAuthentication | undefined;

/**
 * The inspection's reading of what authenticates each Express, Koa, Fastify and Hono route (inspect/resolve/
 * routeAuthentication.ts), read once for the whole apply run: init keyed public routes globally by the same answer.
 */
export async function readRouteAuthentication(root: string): Promise<RouteAuthenticationOf> {
  const { inspectProject } = await import('../inspect/index.js');
  const routes = (await inspectProject(root)).routeAuthentication ?? [];
  return (target) => {
    const inFile = routes.filter((r) => r.file === target.file);
    const byRoute = inFile.filter((r) => target.path !== undefined && r.method === (target.method ?? 'POST') && r.path === target.path);
    const found = byRoute.length > 0 ? byRoute : inFile.filter((r) => r.line === target.line);
    if (found.length === 0) return undefined;
    // A registration mounted at several paths is unauthenticated only if every one of them is.
    return found.find((r) => r.by.length > 0) ?? found[0];
  };
}

/** The middle of the step about a route nothing authenticates: where apply looked, so the user can check it. */
export const LOOKED_FOR_AUTHENTICATION = 'nor on its router before it, nor where the router is mounted';
