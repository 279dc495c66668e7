import path from 'node:path';
import { ts } from 'ts-morph';
import { isFunctionLike, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import { rawFunctionName } from '../parse/functionKey.js';
import type { HttpMethod } from '../types.js';
import type { Detector, FileContext, FileFacts, GuardRef, OpenApiConfig, OwnerRef, RawRoute } from './detectorTypes.js';
import { guardOf, priorUses, routeArgumentGuards } from './routeGuards.js';
import { readdirLoad } from './readdirLoops.js';
import { bodyTypeArgument, describeHandlers } from './routeHandlers.js';
import { frameworkOfModule, frameworkOfType, guessFramework, isHttpClient, ownerFromInitializer } from './routerOrigins.js';

const METHODS: Record<string, HttpMethod> = { post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE', del: 'DELETE', all: 'ALL' };
/** GET routes are kept only when they reach a payment that changes money or billing (filtered in inspectProject). */
const METHOD_CALLS: Record<string, HttpMethod> = { ...METHODS, get: 'GET' };
/** Calls that return the same app/router, so a route can hang off them: `app.withTypeProvider<T>().post(…)`, `app.register(cors).post(…)`. */
const CHAINABLE = new Set([
  'get', 'head', 'options', 'post', 'put', 'patch', 'delete', 'del', 'all', 'use', 'withTypeProvider', 'register', 'after',
  'addHook', 'decorate', 'decorateRequest', 'decorateReply', 'setErrorHandler', 'setNotFoundHandler', 'addSchema',
  'addContentTypeParser', 'setValidatorCompiler', 'setSerializerCompiler', 'openapi',
]);

interface Receiver {
  ref: OwnerRef;
  framework?: string;
  /** How sure we are that the receiver is a server router rather than, say, an HTTP client. */
  evidence: 'constructed' | 'imported' | 'param' | 'unknown';
}

/** Express, Fastify, Koa (@koa/router) and Hono (with @hono/zod-openapi): route registrations and the mounts that prefix them. */
export const httpRoutes: Detector = {
  name: 'http-routes',
  // `.get(` alone is in every file (Map, headers); a GET route starts with a path literal. A readdir loop may only
  // call each module it loads with the app (`require('./' + file)(app)`).
  // A @hono/zod-openapi routes file holds only `createRoute({ … })` configs, registered elsewhere with `.openapi(…)`.
  mentions: /\.(post|put|patch|delete|del|all|route|on|register|use|basePath|openapi)\s*[(<]|\.get\s*\(\s*['"`]\/|readdir|createRoute\s*\(|@hono\/node-server/,
  detect(ctx, facts) {
    registerOwners(ctx, facts);
    for (const [name, init] of ctx.index.consts) {
      const config = openApiConfig(init, ctx);
      if (config) facts.openApiConfigs.set(name, config);
    }
    for (const call of ctx.index.calls) {
      const callee = call.expression;
      if (ts.isIdentifier(callee) || isRequireCall(callee) || ts.isCallExpression(callee)) {
        if (ts.isIdentifier(callee)) recordServe(call, callee, ctx, facts);
        recordWireUp(call, callee, ctx, facts);
        continue;
      }
      if (!ts.isPropertyAccessExpression(callee)) continue;
      const name = callee.name.text;
      if (Object.hasOwn(METHOD_CALLS, name)) recordMethodRoute(call, callee, METHOD_CALLS[name] as HttpMethod, ctx, facts);
      else if (name === 'route') recordRouteCall(call, callee, ctx, facts);
      else if (name === 'on') recordHonoOn(call, callee, ctx, facts);
      else if (name === 'use') recordUse(call, callee, ctx, facts);
      else if (name === 'register') recordRegister(call, callee, ctx, facts);
      else if (name === 'prefix') recordKoaPrefix(call, callee, ctx, facts);
      else if (name === 'openapi') recordOpenApi(call, callee, ctx, facts);
    }
  },
};

function registerOwners(ctx: FileContext, facts: FileFacts): void {
  for (const [name, init] of ctx.index.consts) {
    // @fastify/autoload honours `export const autoPrefix = '/x'` over the directory name.
    if (name === 'autoPrefix' && ctx.index.exports.has('autoPrefix')) {
      const prefix = stringValue(init, ctx.index.consts);
      if (prefix !== undefined) facts.owners.set('@autoPrefix', { framework: 'fastify', root: false, prefix });
    }
    let expr = unwrap(init);
    // Chained construction: `new Hono().basePath('/api')`, `new Hono().post(…)`.
    let basePath: string | undefined;
    let baseIdent: string | undefined;
    while (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression)) {
      const method = expr.expression.name.text;
      if (method === 'basePath') basePath = stringValue(expr.arguments[0], ctx.index.consts);
      else if (!CHAINABLE.has(method)) break;
      expr = unwrap(expr.expression.expression);
    }
    const info = ownerFromInitializer(expr, ctx);
    if (info) {
      facts.owners.set(name, basePath && !info.prefix ? { ...info, prefix: basePath } : info);
    } else if (basePath !== undefined && ts.isIdentifier(expr)) {
      baseIdent = expr.text;
      facts.owners.set(name, { framework: facts.owners.get(baseIdent)?.framework ?? 'hono', root: false });
      facts.mounts.push({ parent: { file: ctx.rel, name: baseIdent }, child: { file: ctx.rel, name }, prefix: basePath });
    }
  }
}

/** Peels route chains: `router.route('/x').post(h)`, `router.post('/a', h).put('/b', h)`. */
function baseOf(expr: ts.Expression): { base: ts.Expression; routePath?: ts.Expression } {
  let current = unwrap(expr);
  let routePath: ts.Expression | undefined;
  while (ts.isCallExpression(current) && ts.isPropertyAccessExpression(current.expression)) {
    const name = current.expression.name.text;
    if (name === 'route' && current.arguments.length === 1 && routePath === undefined) routePath = current.arguments[0];
    // Hono's `.route('/x', child)` mounts and returns the same app: `new Hono().route('/a', a).post('/b', h)`.
    else if (!CHAINABLE.has(name) && !(name === 'route' && current.arguments.length === 2)) break;
    current = unwrap(current.expression.expression);
  }
  return { base: current, routePath };
}

function resolveReceiver(base: ts.Expression, ctx: FileContext, facts: FileFacts): Receiver | undefined {
  if (ts.isIdentifier(base)) {
    const name = base.text;
    const owner = facts.owners.get(name);
    if (owner) return { ref: { file: ctx.rel, name }, framework: owner.framework, evidence: 'constructed' };
    if (isHttpClient(name, ctx)) return undefined;
    const imported = ctx.index.imports.get(name);
    if (imported) {
      if (frameworkOfModule(imported.module)) return undefined; // `express.post` is not a route
      return { ref: { file: ctx.rel, name }, framework: guessFramework(ctx), evidence: 'imported' };
    }
    const param = enclosingParam(base, name);
    if (param) {
      return { ref: { file: ctx.rel, name: rawFunctionName(param.fn) }, framework: frameworkOfType(param.param.type, ctx) ?? guessFramework(ctx), evidence: 'param' };
    }
    return { ref: { file: ctx.rel, name }, framework: guessFramework(ctx), evidence: 'unknown' };
  }
  if (ts.isPropertyAccessExpression(base) && ts.isIdentifier(base.expression)) {
    const ns = base.expression.text;
    if (ctx.index.imports.get(ns)?.imported === '*' && !frameworkOfModule(ctx.index.imports.get(ns)?.module ?? '')) {
      return { ref: { file: ctx.rel, name: ns, member: base.name.text }, framework: guessFramework(ctx), evidence: 'imported' };
    }
  }
  if (ts.isPropertyAccessExpression(base) && base.expression.kind === ts.SyntaxKind.ThisKeyword) {
    if (isHttpClient(base.name.text, ctx)) return undefined;
    return { ref: { file: ctx.rel, name: `this.${base.name.text}` }, framework: guessFramework(ctx), evidence: 'unknown' };
  }
  if (ts.isNewExpression(base) || ts.isCallExpression(base)) {
    const info = ownerFromInitializer(base, ctx);
    if (info) {
      const holder = holderVariable(base);
      const name = holder ?? `<expr@${base.pos}>`;
      if (!facts.owners.has(name)) facts.owners.set(name, info);
      return { ref: { file: ctx.rel, name }, framework: info.framework, evidence: 'constructed' };
    }
  }
  return undefined;
}

function holderVariable(node: ts.Node): string | undefined {
  let current: ts.Node | undefined = node.parent;
  while (current && (ts.isCallExpression(current) || ts.isPropertyAccessExpression(current) || ts.isParenthesizedExpression(current))) current = current.parent;
  return current && ts.isVariableDeclaration(current) && ts.isIdentifier(current.name) ? current.name.text : undefined;
}

function enclosingParam(node: ts.Node, name: string): { fn: ts.FunctionLikeDeclaration; param: ts.ParameterDeclaration } | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (isFunctionLike(current)) {
      const param = current.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === name);
      if (param) return { fn: current, param };
    }
  }
  return undefined;
}

/** Unknown receivers need a known framework in scope; constructed and imported routers are trusted. */
function accepted(receiver: Receiver | undefined): receiver is Receiver & { framework: string } {
  if (!receiver) return false;
  if (receiver.evidence === 'constructed' || receiver.evidence === 'imported') {
    receiver.framework ??= 'unknown';
    return true;
  }
  return receiver.framework !== undefined;
}

function pathsOf(expr: ts.Expression | undefined, ctx: FileContext): string[] | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  if (ts.isArrayLiteralExpression(node)) {
    const all = node.elements.map((e) => stringValue(e, ctx.index.consts));
    return all.every((p): p is string => p !== undefined && isRoutePath(p)) ? all : undefined;
  }
  const value = stringValue(node, ctx.index.consts);
  return value !== undefined && isRoutePath(value) ? [value] : undefined;
}

function isRoutePath(value: string): boolean {
  return value.startsWith('/') || value === '*' || value === '';
}

function recordMethodRoute(call: ts.CallExpression, callee: ts.PropertyAccessExpression, method: HttpMethod, ctx: FileContext, facts: FileFacts): void {
  const { base, routePath } = baseOf(callee.expression);
  let paths: string[] | undefined;
  let handlerArgs: readonly ts.Expression[];
  if (routePath) {
    paths = pathsOf(routePath, ctx);
    handlerArgs = call.arguments;
  } else {
    // koa-router named routes: router.post('name', '/path', handler).
    const first = call.arguments[0];
    const second = call.arguments[1];
    const named = first && ts.isStringLiteral(first) && !isRoutePath(first.text) && second && pathsOf(second, ctx);
    paths = named ? pathsOf(second, ctx) : pathsOf(first, ctx);
    handlerArgs = call.arguments.slice(named ? 2 : 1);
  }
  if (!paths || handlerArgs.length === 0 || !handlerArgs.some(isHandlerLike)) return;
  const receiver = resolveReceiver(base, ctx, facts);
  if (!accepted(receiver)) return;
  const info = describeHandlers(handlerArgs, ctx);
  const typed = bodyTypeArgument(call);
  if (typed) info.bodyShapes.push(typed);
  const own = [...chainGuards(callee.expression, ctx), ...routeArgumentGuards(handlerArgs, ctx)];
  // The method name's line: in `router.route('/:id').get(…).patch(…)` each method has its own line.
  for (const p of paths) facts.routes.push(withGuards(makeRoute(ctx, callee.name, method, p, receiver, info), own, base, call, ctx, facts));
}

/** `router.route('/x').all(auth).post(h)`: the middleware the chain below the method puts before every verb. */
function chainGuards(expr: ts.Expression, ctx: FileContext): GuardRef[] {
  const out: GuardRef[] = [];
  for (let current = unwrap(expr); ts.isCallExpression(current) && ts.isPropertyAccessExpression(current.expression); current = unwrap(current.expression.expression)) {
    const name = current.expression.name.text;
    if (name === 'all' || name === 'use') out.unshift(...current.arguments.filter((a) => stringValue(a, ctx.index.consts) === undefined).flatMap((a) => guardOf(a, ctx)));
  }
  return out;
}

/** Express, Koa, Fastify, Hono routes on a router named in this file: their own middleware and the router's before them. */
function withGuards(route: RawRoute, own: GuardRef[], base: ts.Expression, call: ts.CallExpression, ctx: FileContext, facts: FileFacts): RawRoute {
  if (!['express', 'koa', 'fastify', 'hono'].includes(route.framework ?? '')) return route;
  // `export const r = new Hono().use(auth).post('/x', h)`: the app is made in the chain, so only the chain's use()
  // calls (in `own`) run before the route.
  if (ts.isNewExpression(base) || ts.isCallExpression(base)) return { ...route, guards: own };
  if (!ts.isIdentifier(base)) return route;
  return { ...route, guards: [...priorUses(base.text, call.pos, route.path, ctx, (arg) => isRouterArgument(arg, ctx, facts)), ...own] };
}

/** A use() argument that mounts a router rather than running before the routes: a router of this file, `x.routes()`, `require('./x')`. */
function isRouterArgument(arg: ts.Expression, ctx: FileContext, facts: FileFacts): boolean {
  const node = unwrap(arg);
  if (ts.isIdentifier(node)) return facts.owners.has(node.text);
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) return true;
    if (ts.isPropertyAccessExpression(callee) && /^(routes|middleware|allowedMethods)$/.test(callee.name.text)) return true;
  }
  return readdirLoad(node, undefined, ctx) !== undefined;
}

/** The guards a mount gets: the middleware beside the child in the call, and the parent's use() / addHook() before it. */
function mountGuards(parent: ts.Expression, call: ts.CallExpression, beside: readonly ts.Expression[], prefix: string | null, ctx: FileContext, facts: FileFacts): GuardRef[] | undefined {
  const chain = unwrap(parent);
  const { base } = baseOf(chain);
  const besideGuards = beside.filter((a) => !isRouterArgument(a, ctx, facts)).flatMap((a) => guardOf(a, ctx));
  // The use() calls chained before the mount (`new Hono().use(auth).route('/x', child)`) run before it too.
  const chained = chain === base ? [] : chainGuards(chain, ctx);
  if (ts.isIdentifier(base)) return [...priorUses(base.text, call.pos, prefix ?? undefined, ctx, (arg) => isRouterArgument(arg, ctx, facts)), ...chained, ...besideGuards];
  if (ts.isNewExpression(base) || ts.isCallExpression(base)) return [...chained, ...besideGuards];
  return undefined;
}

function isHandlerLike(arg: ts.Expression): boolean {
  const node = unwrap(arg);
  return isFunctionLike(node) || ts.isIdentifier(node) || ts.isPropertyAccessExpression(node) || ts.isCallExpression(node) || (ts.isObjectLiteralExpression(node) && objectProperty(node, 'handler') !== undefined);
}

function makeRoute(ctx: FileContext, call: ts.Node, method: HttpMethod, routePath: string, receiver: Receiver & { framework: string }, info: ReturnType<typeof describeHandlers>): RawRoute {
  return {
    file: ctx.rel,
    line: ctx.line(call),
    method,
    path: routePath,
    owner: receiver.ref,
    framework: receiver.framework,
    ...(info.handler ? { handler: info.handler } : {}),
    ...(info.delegate ? { delegate: info.delegate } : {}),
    handlerKeys: info.handlerKeys,
    bodyFields: info.bodyFields,
    bodyShapes: info.bodyShapes,
  };
}

/** Fastify `route({ method, url, handler })` or Hono `app.route('/prefix', subApp)`. */
function recordRouteCall(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const [first, second] = call.arguments;
  if (first && ts.isObjectLiteralExpression(first)) {
    const methods = methodsOf(objectProperty(first, 'method'), ctx);
    const paths = pathsOf(objectProperty(first, 'url') ?? objectProperty(first, 'path'), ctx);
    if (!methods.length || !paths) return;
    const receiver = resolveReceiver(baseOf(callee.expression).base, ctx, facts);
    if (!accepted(receiver)) return;
    if (receiver.framework === 'unknown') receiver.framework = 'fastify';
    const info = describeHandlers([first], ctx);
    const own = routeArgumentGuards([first], ctx);
    for (const method of methods) for (const p of paths) facts.routes.push(withGuards(makeRoute(ctx, call, method, p, receiver, info), own, baseOf(callee.expression).base, call, ctx, facts));
    return;
  }
  if (first && second && call.arguments.length === 2) {
    const receiver = resolveReceiver(baseOf(callee.expression).base, ctx, facts);
    if (!accepted(receiver)) return;
    const prefix = stringValue(first, ctx.index.consts) ?? null;
    const guards = mountGuards(callee.expression, call, [], prefix, ctx, facts);
    for (const child of mountedChildren(second, ctx)) facts.mounts.push({ parent: receiver.ref, child, prefix, ...(guards ? { guards } : {}) });
  }
}

function methodsOf(expr: ts.Expression | undefined, ctx: FileContext): HttpMethod[] {
  if (!expr) return [];
  const node = unwrap(expr);
  const values = ts.isArrayLiteralExpression(node) ? node.elements.map((e) => stringValue(e, ctx.index.consts)) : [stringValue(node, ctx.index.consts)];
  const out: HttpMethod[] = [];
  for (const v of values) {
    const method = v ? METHODS[v.toLowerCase()] : undefined;
    if (method && !out.includes(method)) out.push(method);
  }
  return out;
}

/** Hono `app.on('POST', '/path', handler)` / `app.on(['PUT','PATCH'], …)`. */
function recordHonoOn(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const [methodArg, pathArg, ...handlers] = call.arguments;
  const methods = methodsOf(methodArg, ctx);
  const paths = pathsOf(pathArg, ctx);
  if (!methods.length || !paths || !handlers.length) return;
  const receiver = resolveReceiver(baseOf(callee.expression).base, ctx, facts);
  if (!accepted(receiver) || receiver.framework !== 'hono') return;
  const info = describeHandlers(handlers, ctx);
  const own = routeArgumentGuards(handlers, ctx);
  for (const method of methods) for (const p of paths) facts.routes.push(withGuards(makeRoute(ctx, call, method, p, receiver, info), own, baseOf(callee.expression).base, call, ctx, facts));
}

/**
 * @hono/zod-openapi `createRoute({ method: 'post', path: '/tasks/{id}' })` (or the bare config object): method and
 * path, the OpenAPI `{id}` turned into Hono's `:id` as OpenAPIHono registers it.
 */
function openApiConfig(expr: ts.Expression | undefined, ctx: FileContext): OpenApiConfig | undefined {
  if (!expr) return undefined;
  let node = unwrap(expr);
  if (ts.isCallExpression(node)) {
    const callee = unwrap(node.expression);
    const origin = ts.isIdentifier(callee) ? ctx.index.imports.get(callee.text) : undefined;
    const isCreateRoute = ts.isIdentifier(callee) && (callee.text === 'createRoute' || (origin?.module === '@hono/zod-openapi' && origin.imported === 'createRoute'));
    if (!isCreateRoute || !node.arguments[0]) return undefined;
    node = unwrap(node.arguments[0]);
  }
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  const method = stringValue(objectProperty(node, 'method'), ctx.index.consts)?.toLowerCase();
  const routePath = stringValue(objectProperty(node, 'path'), ctx.index.consts);
  if (!method || !Object.hasOwn(METHOD_CALLS, method) || routePath === undefined || !isRoutePath(routePath)) return undefined;
  return { method: METHOD_CALLS[method] as HttpMethod, path: routePath.replace(/\{([^{}/]+)\}/g, ':$1') };
}

/**
 * @hono/zod-openapi `router.openapi(route, handler, hook?)`: the route config inline, a local binding, or imported
 * (`routes.create` of `import * as routes`, completed once files are linked). The receiver is often the project's
 * own factory (`createRouter().openapi(…)`), so a call we cannot trace is taken as a Hono router held by its variable.
 */
function recordOpenApi(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const [configArg, handlerArg] = call.arguments;
  if (!configArg || !handlerArg || !isHandlerLike(handlerArg)) return;
  const { base } = baseOf(callee.expression);
  let receiver = resolveReceiver(base, ctx, facts);
  if (!receiver && ts.isCallExpression(base)) {
    const holder = holderVariable(base);
    if (holder === undefined) return;
    if (!facts.owners.has(holder)) facts.owners.set(holder, { framework: 'hono', root: false });
    receiver = { ref: { file: ctx.rel, name: holder }, framework: 'hono', evidence: 'constructed' };
  }
  if (!accepted(receiver)) return;
  if (receiver.framework === 'unknown') receiver.framework = 'hono';
  if (receiver.framework !== 'hono') return;
  const info = describeHandlers([handlerArg], ctx);
  const node = unwrap(configArg);
  const local = ts.isIdentifier(node) && !ctx.index.imports.has(node.text) ? ctx.index.consts.get(node.text) : node;
  const config = openApiConfig(local, ctx);
  if (config) {
    facts.routes.push(makeRoute(ctx, callee.name, config.method, config.path, receiver, info));
    return;
  }
  if (!ts.isIdentifier(node) && !ts.isPropertyAccessExpression(node)) return;
  const ref = childRef(node, ctx);
  if (!ref) return;
  const { method: _method, path: _path, ...route } = makeRoute(ctx, callee.name, 'POST', '', receiver, info);
  facts.openApiRoutes.push({ ...route, config: ref });
}

/**
 * The children a mount argument stands for: one (childRef), or each element of the array a loop walks when the
 * argument is the loop's variable: `routes.forEach((route) => app.route('/', route))`, `for (const r of [a, b]) app.use(r)`.
 */
function mountedChildren(expr: ts.Expression, ctx: FileContext): OwnerRef[] {
  const node = unwrap(expr);
  const elements = ts.isIdentifier(node) ? loopedArray(node, ctx) : undefined;
  if (elements) return elements.flatMap((e) => childRef(e, ctx) ?? []);
  const child = childRef(expr, ctx);
  return child ? [child] : [];
}

function loopedArray(variable: ts.Identifier, ctx: FileContext): readonly ts.Expression[] | undefined {
  for (let current = variable.parent; current; current = current.parent) {
    if (isFunctionLike(current)) {
      const param = current.parameters[0];
      return param && ts.isIdentifier(param.name) && param.name.text === variable.text ? loopElements(current, ctx) : undefined;
    }
    if (ts.isForOfStatement(current)) {
      const decl = ts.isVariableDeclarationList(current.initializer) ? current.initializer.declarations[0] : undefined;
      if (decl && ts.isIdentifier(decl.name) && decl.name.text === variable.text) return loopElements(current, ctx);
    }
  }
  return undefined;
}

/**
 * The rows of a mount table a loop walks, when `use(prefix, child)` takes both from the loop's element: `r.path` and
 * `r.route` of `rows.forEach((r) => …)` / `for (const r of rows)`, or `path` and `route` destructured from it, over an
 * array literal of object literals (as node-express-boilerplate mounts its routers). A row whose prefix is not a
 * literal gets null (unresolved); undefined when the arguments are not read from a loop element this way.
 */
function loopedMountTable(first: ts.Expression, second: ts.Expression, ctx: FileContext): Array<{ prefix: string | null; child: OwnerRef }> | undefined {
  const a = unwrap(first);
  const b = unwrap(second);
  let keys: [string, string] | undefined;
  let elements: readonly ts.Expression[] | undefined;
  if (ts.isPropertyAccessExpression(a) && ts.isPropertyAccessExpression(b) && ts.isIdentifier(a.expression) && ts.isIdentifier(b.expression) && a.expression.text === b.expression.text) {
    keys = [a.name.text, b.name.text];
    elements = loopedArray(a.expression, ctx);
  } else if (ts.isIdentifier(a) && ts.isIdentifier(b)) {
    const bound = (id: ts.Identifier) => {
      for (let current: ts.Node | undefined = id.parent; current; current = current.parent) {
        const pattern = isFunctionLike(current) ? current.parameters[0]?.name : ts.isForOfStatement(current) && ts.isVariableDeclarationList(current.initializer) ? current.initializer.declarations[0]?.name : undefined;
        if (!pattern) continue;
        if (!ts.isObjectBindingPattern(pattern)) return undefined;
        const element = pattern.elements.find((e) => ts.isIdentifier(e.name) && e.name.text === id.text && !e.dotDotDotToken);
        const key = element && (element.propertyName ? (ts.isIdentifier(element.propertyName) || ts.isStringLiteral(element.propertyName) ? element.propertyName.text : undefined) : id.text);
        return key === undefined ? undefined : { key, loop: current };
      }
      return undefined;
    };
    const [pa, pb] = [bound(a), bound(b)];
    if (!pa || !pb || pa.loop !== pb.loop) return undefined;
    keys = [pa.key, pb.key];
    elements = loopElements(pa.loop, ctx);
  }
  if (!keys || !elements || elements.length === 0) return undefined;
  const rows: Array<{ prefix: string | null; child: OwnerRef }> = [];
  for (const element of elements) {
    const row = unwrap(element);
    if (!ts.isObjectLiteralExpression(row)) return undefined;
    const value = (key: string): ts.Expression | undefined => {
      const property = row.properties.find((p) => p.name !== undefined && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === key);
      return property && ts.isPropertyAssignment(property) ? property.initializer : property && ts.isShorthandPropertyAssignment(property) ? property.name : undefined;
    };
    const prefix = value(keys[0]);
    const child = value(keys[1]);
    const ref = child ? childRef(child, ctx) : undefined;
    if (!ref) continue;
    rows.push({ prefix: prefix ? (stringValue(prefix, ctx.index.consts) ?? null) : null, child: ref });
  }
  return rows.length > 0 ? rows : undefined;
}

/** The array literal a `forEach` callback or a `for … of` loop walks (`loop` is the callback or the statement). */
function loopElements(loop: ts.Node, ctx: FileContext): readonly ts.Expression[] | undefined {
  let array: ts.Expression | undefined;
  if (isFunctionLike(loop)) {
    const call = loop.parent;
    if (ts.isCallExpression(call) && call.arguments[0] === loop && ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === 'forEach') array = call.expression.expression;
  } else if (ts.isForOfStatement(loop)) array = loop.expression;
  if (!array) return undefined;
  let node = unwrap(array);
  if (ts.isIdentifier(node)) node = unwrap(ctx.index.consts.get(node.text) ?? node);
  return ts.isArrayLiteralExpression(node) && node.elements.every((e) => !ts.isSpreadElement(e)) ? node.elements : undefined;
}

/**
 * `serve({ fetch: app.fetch })` from @hono/node-server: `app` is an application, even when the project's own factory
 * (`createApp()`) built it, so the routes mounted on it have known paths.
 */
function recordServe(call: ts.CallExpression, callee: ts.Identifier, ctx: FileContext, facts: FileFacts): void {
  const origin = ctx.index.imports.get(callee.text);
  if (origin?.module !== '@hono/node-server' || origin.imported !== 'serve') return;
  const fetch = unwrap(objectProperty(call.arguments[0], 'fetch') ?? call);
  if (!ts.isPropertyAccessExpression(fetch) || fetch.name.text !== 'fetch') return;
  const app = childRef(fetch.expression, ctx);
  if (app) facts.servedApps.push(app);
}

/** A mounted child: identifier, `ns.member`, `require('./x')`, `import('./x')`, `child.routes()`, inline plugin. */
function childRef(expr: ts.Expression, ctx: FileContext): OwnerRef | undefined {
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) return { file: ctx.rel, name: node.text };
  if (isFunctionLike(node)) return { file: ctx.rel, name: rawFunctionName(node) };
  if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) return { file: ctx.rel, name: node.expression.text, member: node.name.text };
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const arg = node.arguments[0];
    if ((callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) && arg && ts.isStringLiteral(arg)) {
      return { file: ctx.rel, module: arg.text };
    }
    // koa: router.routes() / router.middleware(); fastify: fp(plugin).
    if (ts.isPropertyAccessExpression(callee) && /^(routes|middleware)$/.test(callee.name.text)) return childRef(callee.expression, ctx);
    if (ts.isIdentifier(callee) && arg && node.arguments.length <= 2) return childRef(arg, ctx);
  }
  return undefined;
}

/** Express `app.use('/api', router)`, Koa `router.use('/v1', child.routes())`, `app.use(router.routes())`. */
function recordUse(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const args = call.arguments;
  if (!args.length) return;
  const receiver = resolveReceiver(baseOf(callee.expression).base, ctx, facts);
  if (!accepted(receiver)) return;
  const first = args[0] as ts.Expression;
  // A module per file of a directory, mounted in a loop: `app.use('/' + file.replace(/\.js$/, ''), require('./' + file))`.
  const loaded = (args[1] ? readdirLoad(args[1], first, ctx) : undefined) ?? readdirLoad(first, undefined, ctx);
  if (loaded) {
    facts.mounts.push({ parent: receiver.ref, child: { file: ctx.rel }, prefix: loaded.prefix === null ? null : '', dirLoad: loaded });
    return;
  }
  // A table of routers mounted in a loop: `[{ path: '/auth', route: authRoute }, …].forEach((r) => router.use(r.path, r.route))`.
  const table = args.length === 2 ? loopedMountTable(first, args[1] as ts.Expression, ctx) : undefined;
  if (table) {
    for (const row of table) facts.mounts.push({ parent: receiver.ref, child: row.child, prefix: row.prefix });
    return;
  }
  const firstValue = stringValue(first, ctx.index.consts);
  const hasPath = firstValue !== undefined ? isRoutePath(firstValue) : ts.isIdentifier(unwrap(first)) && /path|prefix|base/i.test(unwrap(first).getText());
  const prefix = hasPath ? (firstValue ?? null) : '';
  const mounted = hasPath ? args.slice(1) : [...args];
  for (const [index, arg] of mounted.entries()) {
    // `app.use('/admin', auth, adminRouter)`: what comes before the child in the call runs before its routes.
    const guards = mountGuards(callee.expression, call, mounted.slice(0, index), prefix, ctx, facts);
    for (const child of mountedChildren(arg, ctx)) facts.mounts.push({ parent: receiver.ref, child, prefix, ...(guards ? { guards } : {}) });
  }
}

/** Fastify `register(plugin, { prefix })`, including @fastify/autoload directories. */
function recordRegister(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const [pluginArg, options] = call.arguments;
  if (!pluginArg) return;
  const receiver = resolveReceiver(baseOf(callee.expression).base, ctx, facts);
  if (!accepted(receiver)) return;
  const origin = ts.isIdentifier(unwrap(pluginArg)) ? ctx.originOf(unwrap(pluginArg)) : undefined;
  const prefixExpr = objectProperty(options, 'prefix');
  if (origin && /^(@fastify\/autoload|fastify-autoload)$/.test(origin.module)) {
    const dir = autoloadDir(objectProperty(options, 'dir'), ctx);
    const nested = objectProperty(objectProperty(options, 'options'), 'prefix');
    if (dir !== undefined) {
      facts.mounts.push({ parent: receiver.ref, child: { file: ctx.rel }, prefix: nested ? (stringValue(nested, ctx.index.consts) ?? null) : '', autoloadDir: dir });
    }
    return;
  }
  const loaded = readdirLoad(pluginArg, prefixExpr, ctx);
  if (loaded) {
    facts.mounts.push({ parent: receiver.ref, child: { file: ctx.rel }, prefix: loaded.prefix === null ? null : '', dirLoad: loaded });
    return;
  }
  const child = childRef(pluginArg, ctx);
  if (!child) return;
  const prefix = prefixExpr ? (stringValue(prefixExpr, ctx.index.consts) ?? null) : '';
  const guards = mountGuards(callee.expression, call, [], prefix, ctx, facts);
  facts.mounts.push({ parent: receiver.ref, child, prefix, ...(guards ? { guards } : {}) });
}

/** `path.join(__dirname, 'routes')`, `join(import.meta.dirname, 'routes')`, `new URL('./routes', import.meta.url)`. */
function autoloadDir(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  const parts: string[] = [];
  const collect = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) parts.push(n.text);
    else ts.forEachChild(n, collect);
  };
  collect(node);
  const rel = parts.filter((p) => !p.startsWith('file:')).join('/');
  if (!rel) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(ctx.rel), rel)).replace(/\/$/, '');
}

function recordKoaPrefix(call: ts.CallExpression, callee: ts.PropertyAccessExpression, ctx: FileContext, facts: FileFacts): void {
  const target = unwrap(callee.expression);
  if (!ts.isIdentifier(target)) return;
  const owner = facts.owners.get(target.text);
  const value = stringValue(call.arguments[0], ctx.index.consts);
  if (owner?.framework === 'koa' && value !== undefined) owner.prefix = value;
}

function isRequireCall(node: ts.Expression): node is ts.CallExpression {
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require' && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0] as ts.Expression);
}

/**
 * `registerRoutes(app)` or `require('./routes')(app)`: the function's routes hang off `app` with no extra prefix; in a
 * readdir loop, `require('./routes/' + file)(app)` does so for each file.
 */
function recordWireUp(call: ts.CallExpression, callee: ts.Identifier | ts.CallExpression, ctx: FileContext, facts: FileFacts): void {
  if ((ts.isIdentifier(callee) && callee.text === 'require') || !call.arguments.length) return;
  const loaded = ts.isCallExpression(callee) && !isRequireCall(callee) ? readdirLoad(callee, undefined, ctx) : undefined;
  if (ts.isCallExpression(callee) && !isRequireCall(callee) && !loaded) return;
  const child: OwnerRef = ts.isIdentifier(callee) ? { file: ctx.rel, name: callee.text } : loaded ? { file: ctx.rel } : { file: ctx.rel, module: (callee.arguments[0] as ts.StringLiteral).text };
  const imported = ts.isIdentifier(callee) ? ctx.index.imports.has(callee.text) : true;
  for (const arg of call.arguments) {
    const node = unwrap(arg);
    if (!ts.isIdentifier(node)) continue;
    let parent: OwnerRef | undefined;
    if (facts.owners.has(node.text)) parent = { file: ctx.rel, name: node.text };
    else {
      const param = enclosingParam(node, node.text);
      if (param && imported && (frameworkOfType(param.param.type, ctx) || guessFramework(ctx))) {
        parent = { file: ctx.rel, name: rawFunctionName(param.fn) };
      }
    }
    const guards = parent && !loaded ? mountGuards(node, call, [], '', ctx, facts) : undefined;
    if (parent) facts.mounts.push({ parent, child, prefix: '', ...(loaded ? { dirLoad: loaded } : {}), ...(guards ? { guards } : {}) });
  }
}
