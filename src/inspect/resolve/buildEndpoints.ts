import path from 'node:path';
import type { DirLoad, NestBootstrap, OpenApiRoute, OwnerInfo, RawMount, RawRoute } from '../detectors/detectorTypes.js';
import { STREAMED_RESPONSE } from '../detectors/streamedResponse.js';
import { loadedByLoop } from './dirLoad.js';
import { routeAuthenticationReader, type Authentication, type GuardedMount } from './routeAuthentication.js';
import type { EndpointFinding } from '../types.js';
import type { FunctionFacts } from '../parse/indexSource.js';
import type { FunctionGraph } from './functionGraph.js';
import type { ProjectRecords } from './projectRecords.js';
import { ownerKey, resolveBinding, resolveExport, resolveImport, splitBindingKey } from './resolveModules.js';

interface Prefix {
  prefix: string;
  resolved: boolean;
}

export interface BuiltEndpoint {
  finding: EndpointFinding;
  route: RawRoute;
  /** What authenticates it (routeAuthentication.ts); Express, Koa, Fastify and Hono routes only. */
  authentication?: Authentication;
}

/** `/api` + `/` + `orders/` → `/api/orders`. */
export function joinPath(...parts: string[]): string {
  const joined = `/${parts.filter(Boolean).join('/')}`.replace(/\/{2,}/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

/**
 * Turns raw route registrations into endpoints with full paths: follows mounts (app.use, register, route,
 * autoload directories) up to an application, and composes NestJS global prefix and URI versioning.
 */
export function buildEndpoints(records: ProjectRecords, graph: FunctionGraph, frameworksByPkg: Map<string, string[]>): BuiltEndpoint[] {
  const owners = new Map<string, OwnerInfo>();
  const mountsByChild = new Map<string, Array<{ parent: string; prefix: string | null } & GuardedMount>>();
  const bootstraps: NestBootstrap[] = [];
  const routePrefixes = new Map<string, Array<string | null>>();
  const addMount = (child: string, parent: string, prefix: string | null, from?: { file: string; guards?: RawMount['guards'] }) => {
    const list = mountsByChild.get(child) ?? [];
    const same = list.find((m) => m.parent === parent && m.prefix === prefix);
    // The same mount read twice (two calls): its guards are only known when every call's are.
    if (same) same.guards = same.guards && from?.guards ? [...same.guards, ...from.guards] : undefined;
    else list.push({ parent, prefix, file: from?.file ?? '', ...(from?.guards ? { guards: from.guards } : {}) });
    mountsByChild.set(child, list);
  };
  for (const record of records.files.values()) {
    for (const [name, info] of record.facts.owners) owners.set(`${record.rel}::${name}`, info);
    bootstraps.push(...record.facts.nestBootstraps);
    for (const { prefix } of record.facts.routePrefixes) routePrefixes.set(record.pkgDir, [...(routePrefixes.get(record.pkgDir) ?? []), prefix]);
  }
  for (const record of records.files.values()) {
    for (const served of record.facts.servedApps) {
      const key = ownerKey(records, served);
      owners.set(key, { framework: 'hono', ...owners.get(key), root: true });
    }
  }
  for (const record of records.files.values()) {
    for (const mount of record.facts.mounts) {
      const parent = ownerKey(records, mount.parent);
      if (mount.autoloadDir !== undefined) mountAutoload(records, mount, parent, addMount);
      else if (mount.dirLoad) mountLoaded(records, mount, mount.dirLoad, parent, addMount);
      else addMount(ownerKey(records, mount.child), parent, mount.prefix, { file: record.rel, ...(mount.guards ? { guards: mount.guards } : {}) });
    }
  }

  const prefixesOf = (key: string, visiting: Set<string>): Prefix[] => {
    const own = owners.get(key)?.prefix ?? '';
    const mounts = mountsByChild.get(key);
    if (!mounts?.length || visiting.has(key)) return [{ prefix: own, resolved: !mounts?.length && owners.get(key)?.root === true }];
    visiting.add(key);
    const out: Prefix[] = [];
    for (const mount of mounts) {
      for (const parent of prefixesOf(mount.parent, visiting)) {
        const prefix = joinPath(parent.prefix, mount.prefix ?? '', own);
        if (!out.some((p) => p.prefix === prefix)) out.push({ prefix, resolved: parent.resolved && mount.prefix !== null });
      }
    }
    visiting.delete(key);
    return out.slice(0, 8);
  };

  const authenticationOf = routeAuthenticationReader(records, graph, owners, mountsByChild);
  const built: BuiltEndpoint[] = [];
  for (const record of records.files.values()) {
    for (const route of [...record.facts.routes, ...linkOpenApiRoutes(records, record.facts.openApiRoutes)]) {
      const handlerFacts = route.handlerKeys.flatMap((k) => graph.resolve(route.file, k));
      const bodyFields = collectBodyFields(records, route, handlerFacts);
      const streams = handlerFacts.some((fn) => STREAMED_RESPONSE.test(records.files.get(fn.file)?.text.slice(fn.start, fn.end) ?? ''));
      const base = { route, bodyFields, pkgDir: record.pkgDir, ...(streams ? { streams } : {}) };
      if (route.nest) {
        const via = route.nest.via ? controllerPathVia(records, route.file, route.nest.via) : undefined;
        const nestRoute = via ? { ...route, nest: { ...route.nest, controller: via.path } } : route;
        const { path: full, resolved } = nestPath(nestRoute, bootstrapFor(bootstraps, records, route.file));
        const own = route.prefixResolved !== false && via?.resolved !== false;
        for (const p of full) built.push(endpoint(base, p, resolved && own, 'nestjs'));
        continue;
      }
      if (route.framework === 'routing-controllers') {
        // Under the routePrefix of the package's server (one known prefix: joined; several or a runtime value: unresolved).
        const prefixes = [...new Set(routePrefixes.get(record.pkgDir) ?? [''])];
        const prefix = prefixes.length === 1 ? prefixes[0] : null;
        built.push(endpoint(base, joinPath(prefix ?? '', route.path), route.prefixResolved !== false && prefix !== null && prefix !== undefined, route.framework));
        continue;
      }
      if (!route.owner && route.method === 'ALL' && route.framework === 'nextjs') {
        // A Pages API route that hands the request on (`return handleRoute(req, res)`) checks the method there.
        const methods = delegatedMethods(records, graph, handlerFacts);
        if (methods !== undefined) {
          for (const method of methods) built.push({ ...endpoint({ ...base, route: { ...route, method } }, joinPath(route.path), route.prefixResolved !== false, 'nextjs'), authentication: authenticationOf(route, 'nextjs') });
          continue;
        }
      }
      if (!route.owner) {
        const own = endpoint(base, joinPath(route.path), route.prefixResolved !== false, route.framework ?? 'unknown');
        // Next.js decides per route: a Server Action or a route handler authenticates in its own code or not at all.
        built.push(route.transport === 'server-action' || (route.framework === 'nextjs' && route.transport === undefined) ? { ...own, authentication: authenticationOf(route, 'nextjs') } : own);
        continue;
      }
      const key = ownerKey(records, route.owner);
      let framework = route.framework && route.framework !== 'unknown' ? route.framework : owners.get(key)?.framework;
      if (!framework) {
        const http = (frameworksByPkg.get(record.pkgDir) ?? []).filter((f) => f !== 'nestjs' && f !== 'nextjs');
        framework = http.length === 1 ? http[0] : 'unknown';
      }
      const authentication = authenticationOf(route, framework ?? 'unknown');
      for (const prefix of prefixesOf(key, new Set())) {
        built.push({ ...endpoint(base, joinPath(prefix.prefix, route.path), prefix.resolved, framework ?? 'unknown'), authentication });
      }
    }
  }
  return built;
}

/** `.openapi(routes.create, handler)`: the method and path of the `createRoute` config the reference leads to; others are dropped. */
function linkOpenApiRoutes(records: ProjectRecords, pending: readonly OpenApiRoute[]): RawRoute[] {
  const out: RawRoute[] = [];
  for (const { config, ...rest } of pending) {
    const { file, name } = splitBindingKey(ownerKey(records, config));
    const found = records.files.get(file)?.facts.openApiConfigs.get(name);
    if (found) out.push({ ...rest, method: found.method, path: found.path });
  }
  return out;
}

/**
 * The path a project's own controller decorator gives (`@PaymentController('stripe')` → `payment/stripe`), from the
 * template its definition left (NestControllerFactory). Unreadable: the decorator's first string argument, flagged
 * unresolved, which is what such a decorator most often passes on.
 */
function controllerPathVia(
  records: ProjectRecords,
  file: string,
  via: NonNullable<NonNullable<RawRoute['nest']>['via']>,
): { path: string; resolved: boolean } {
  const guess = { path: via.args[0] ?? '', resolved: false };
  const { file: factoryFile, name } = splitBindingKey(resolveBinding(records, file, via.decorator));
  const factory = records.files.get(factoryFile)?.facts.nestControllerFactories.get(name);
  if (!factory?.parts) return guess;
  let path = '';
  for (const part of factory.parts) {
    if ('text' in part) path += part.text;
    else if ('param' in part) {
      const value = via.args[part.param];
      if (value === undefined) return guess;
      path += value;
    } else {
      const target = splitBindingKey(resolveBinding(records, factoryFile, part.ref));
      const value = records.files.get(target.file)?.stringConsts.get(target.name);
      if (value === undefined) return guess;
      path += value;
    }
  }
  return { path, resolved: true };
}

const METHOD_CHECK = /\b(?:req|request)\s*\.\s*method\s*[!=]==?\s*['"`](GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)['"`]|\bcase\s+['"`](GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)['"`]\s*:/g;

/**
 * The mutating methods the functions a handler calls branch on (`if (req.method === "POST")` in the imported
 * handleRoute), or undefined when they compare none: then every method reaches the work. An empty list: only reads.
 */
function delegatedMethods(records: ProjectRecords, graph: FunctionGraph, handlers: readonly FunctionFacts[]): Array<'POST' | 'PUT' | 'PATCH' | 'DELETE'> | undefined {
  const found = new Set<string>();
  for (const handler of handlers) {
    for (const callee of handler.callees) {
      for (const fn of graph.resolve(handler.file, callee)) {
        const text = records.files.get(fn.file)?.text.slice(fn.start, fn.end) ?? '';
        for (const match of text.matchAll(METHOD_CHECK)) found.add(match[1] ?? match[2]!);
      }
    }
  }
  if (found.size === 0) return undefined;
  return (['POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => found.has(m));
}

function endpoint(base: { route: RawRoute; bodyFields: string[]; streams?: boolean }, fullPath: string, prefixResolved: boolean, framework: string): BuiltEndpoint {
  const { route, bodyFields } = base;
  const finding: EndpointFinding = {
    kind: 'endpoint',
    id: `${route.method} ${fullPath}`,
    file: route.file,
    line: route.line,
    method: route.method,
    path: fullPath,
    framework,
    ...(route.handler ? { handler: route.handler } : {}),
    ...(route.delegate ? { delegate: route.delegate } : {}),
    prefixResolved,
    ...(bodyFields.length ? { bodyFields } : {}),
    ...(route.transport ? { transport: route.transport } : {}),
    ...(base.streams ? { streamsResponse: true as const } : {}),
  };
  return { finding, route };
}

/** @fastify/autoload: each file's default export is a plugin, prefixed by its directories under `dir`. */
function mountAutoload(records: ProjectRecords, mount: RawMount, parent: string, add: (child: string, parent: string, prefix: string | null) => void): void {
  const dir = mount.autoloadDir as string;
  for (const file of records.files.keys()) {
    if (!file.startsWith(`${dir}/`)) continue;
    const relDir = path.posix.dirname(file.slice(dir.length + 1));
    const segments = relDir === '.' ? [] : relDir.split('/');
    const child = resolveExport(records, file, 'default') ?? `${file}::<default>`;
    const autoPrefix = records.files.get(file)?.facts.owners.get('@autoPrefix')?.prefix;
    const prefix = mount.prefix === null ? null : joinPath(mount.prefix, autoPrefix ?? segments.join('/'));
    add(child, parent, prefix === '/' ? '' : prefix);
  }
}

/** A readdir loop: each file it loads (dirLoad.ts) is mounted with the path the loop makes from its name, or none known. */
function mountLoaded(records: ProjectRecords, mount: RawMount, load: DirLoad, parent: string, add: (child: string, parent: string, prefix: string | null) => void): void {
  for (const { file, prefix } of loadedByLoop(records.files.keys(), mount.child.file, load, (from, spec) => resolveImport(records, from, spec))) {
    add(resolveExport(records, file, load.member ?? 'default') ?? `${file}::<default>`, parent, prefix);
  }
}

function bootstrapFor(bootstraps: NestBootstrap[], records: ProjectRecords, file: string): NestBootstrap | undefined {
  const pkgDir = records.files.get(file)?.pkgDir ?? '';
  const candidates = bootstraps.filter((b) => (records.files.get(b.file)?.pkgDir ?? '') === pkgDir);
  if (candidates.length <= 1) return candidates[0];
  // Several Nest apps in one package (Nest CLI monorepo): the bootstrap sharing the longest directory prefix.
  const score = (b: NestBootstrap) => {
    const a = path.posix.dirname(b.file).split('/');
    const c = file.split('/');
    let i = 0;
    while (i < a.length && a[i] === c[i]) i++;
    return i;
  };
  return [...candidates].sort((x, y) => score(y) - score(x))[0];
}

function nestPath(route: RawRoute, bootstrap: NestBootstrap | undefined): { path: string[]; resolved: boolean } {
  const nest = route.nest as NonNullable<RawRoute['nest']>;
  const globalPrefix = bootstrap?.globalPrefix ?? '';
  const versioning = bootstrap?.uriVersioning;
  const versions = versioning ? (nest.versions ?? versioning.defaultVersion ?? ['']) : [''];
  return {
    path: versions.map((v) => joinPath(globalPrefix, v ? `${versioning?.prefix ?? 'v'}${v}` : '', nest.controller, nest.method)),
    resolved: bootstrap?.globalPrefix !== null && !versions.includes('?'),
  };
}

function collectBodyFields(records: ProjectRecords, route: RawRoute, handlerFacts: ReadonlyArray<{ bodyFields: Set<string>; bodyShapes: Set<string>; bodyWhole?: true; file: string }>): string[] {
  // The route's own schema and the shapes the body is validated or typed with describe all of it.
  const shapes = [...route.bodyShapes];
  const read: string[] = [];
  for (const facts of handlerFacts) {
    read.push(...facts.bodyFields);
    shapes.push(...facts.bodyShapes);
  }
  const declared = shapes.flatMap((shape) => lookupShape(records, route.file, shape, 0));
  // A handler that hands the body on whole (`{ ...input, password: hash }`) asks for more than the fields it reads by
  // name: without a declared shape, no list, so the whole body is the fingerprint.
  const whole = handlerFacts.some((facts) => facts.bodyWhole);
  return [...new Set([...route.bodyFields, ...(whole ? [] : read), ...declared])];
}

/** Fields of a DTO class, interface, type or object schema by name: the route's file first, then anywhere. */
function lookupShape(records: ProjectRecords, file: string, name: string, depth: number): string[] {
  if (depth > 3) return [];
  const local = records.files.get(file)?.shapes.get(name);
  let fields = local;
  if (!fields) {
    const owner = shapeOwners(records).get(name);
    if (owner !== undefined) {
      fields = records.files.get(owner)?.shapes.get(name);
      file = owner;
    }
  }
  if (!fields) return [];
  return fields.flatMap((f) => (f.startsWith('@') ? lookupShape(records, file, f.slice(1), depth + 1) : [f]));
}

const shapeOwnersByRecords = new WeakMap<ProjectRecords, { size: number; owners: Map<string, string> }>();

/**
 * The first file (in records order) declaring each shape name, worked out once per project rather than by a scan of
 * every file for each name a route's body is checked against.
 */
function shapeOwners(records: ProjectRecords): ReadonlyMap<string, string> {
  let memo = shapeOwnersByRecords.get(records);
  if (!memo || memo.size !== records.files.size) {
    const owners = new Map<string, string>();
    for (const record of records.files.values()) for (const name of record.shapes.keys()) if (!owners.has(name)) owners.set(name, record.rel);
    shapeOwnersByRecords.set(records, (memo = { size: records.files.size, owners }));
  }
  return memo.owners;
}
