import path from 'node:path';
import type { Config } from '../config/schema.js';
import { formsByHand, wireServerForms, wiresServerForms } from './serverForms.js';
import { UserError } from '../errors.js';
import { normalizeRelative, readInside } from '../emit/safePath.js';
import { projectDependencies } from '../findings/auditProject.js';
import type { FindingDesign } from '../model/findings.js';
import type { ProjectFile } from '../inspect/files/walkProject.js';
import type { StoreConnection } from '../inspect/types.js';
import type { DesignModel } from '../model/types.js';
import { readApplyRecord, sha256, type ApplyRecord } from './applyRecord.js';
import { projectImportsAt } from '../scaffold/profile/pathAliases.js';
import { referenceFramework } from '../scaffold/registry.js';
import { storeFor } from '../scaffold/stores/index.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import { renderInstance, type WiredFramework } from './renderInstance.js';
import { keyTestRequests, type KeyedRoute } from './projectTests.js';
import { relocateFindings } from './relocateFindings.js';
import { NOT_IN_HANDLER, threadProviderKeys } from './thread/threadProviderKeys.js';
import { parseSource } from './sourceFile.js';
import { CLIENT_KEY_STEP, type Transform, type TransformContext } from './transforms/context.js';
import { unlessDecoratedRoute } from './transforms/decoratedRoute.js';
import { NO_AUTHENTICATION, wireExpressRoute } from './transforms/expressRoute.js';
import { wireFastifyRoute } from './transforms/fastifyRoute.js';
import { wireHonoRoute } from './transforms/honoRoute.js';
import { READS_NO_PRINCIPAL, renderMiddlewareInstance, wireKoaRoute } from './transforms/koaRoute.js';
import { renderPlainInstance, wrapPlainFunction } from './transforms/plainWrap.js';
import { planScaffolds, type PlannedScaffold } from '../scaffold/placement/planScaffolds.js';
import { findPackageRoot } from '../scaffold/placement/findPackageRoot.js';
import { emptyScaffoldPlan, mergeScaffoldPlans, type ScaffoldPlan } from './mergeScaffoldPlans.js';
import { CONTROLLER_CLAIM_MODULE, renderControllerClaim } from './transforms/routingControllersMethod.js';
import { locateNestMethod, routeOf, VERBS, wireNestModule, wireNestRoute } from './transforms/nestjsRoute.js';
import { nestUnauthenticatedRoute, readNestAuthentication } from './nestAuthentication.js';
import { wireNextRoute } from './transforms/nextRoute.js';
import { planNextProject } from './transforms/nextProject.js';
import { readNestApplications, type NestRoot } from './nestApplications.js';
import { locateRoute, OPENAPI_ROUTE } from './locateRoute.js';
import { keyNamedHandlers } from './namedHandlers.js';
import { wireOpenApiRoutes } from './openApiRoutes.js';
import { apolloRequestProperty } from './graphqlContext.js';
import { middlewareVerifiedEvents, NAMED_WEBHOOK, renderWebhookEvent, verifiedWebhookProvider, WEBHOOK_EVENT_MODULE, wireVerifiedWebhook } from './transforms/webhook.js';
import { TRIGGER_MODULES, TRIGGER_TRANSFORMS, triggerOccurrence } from './transforms/consumersAndCrons.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';
import { CLAIM_TRANSACTION_MODULE, claimWriteCandidates, moveWritesOntoClaim, renderClaimTransaction } from './claimWrites.js';
import { assignedPrincipal, assignsRequestUser, projectTexts, shopifyPrincipal } from './requestPrincipal.js';
import { readRouteAuthentication } from './routeAuthentication.js';
import { projectFile, projectFiles, withProjectScan } from './projectScan.js';

/** One transform per framework the generated adapters cover; adding one = one file + one line. */
const ROUTE_TRANSFORMS: Record<ApplyFramework, Transform> = { express: unlessDecoratedRoute(wireExpressRoute), fastify: unlessDecoratedRoute(wireFastifyRoute), nestjs: unlessDecoratedRoute(wireNestRoute, ['@nestjs/graphql']), nextjs: wireNextRoute, koa: unlessDecoratedRoute(wireKoaRoute), hono: unlessDecoratedRoute(wireHonoRoute), plain: wrapPlainFunction };

/**
 * Next.js has its own instance module and a client pass (transforms/nextProject.ts); Koa and Hono their instance in
 * koaRoute.ts; 'plain' is a project without a web framework, whose actions are functions (plainWrap.ts).
 */
type ApplyFramework = WiredFramework | 'nextjs' | 'koa' | 'hono' | 'plain';

export interface WireSourceOptions {
  framework: ApplyFramework;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
  /** The file is byte-for-byte what the last apply wrote (see TransformContext.anyLine). */
  anyLine?: boolean;
  /** For GraphQL resolvers wrapped with the plain wrapper (TransformContext.graphql). */
  graphql?: TransformContext['graphql'];
  /** For routing-controllers methods (TransformContext.routingControllers). */
  routingControllers?: TransformContext['routingControllers'];
  /** What authenticates each route (TransformContext.routeAuthentication). */
  routeAuthentication?: TransformContext['routeAuthentication'];
  /** Where the project's middleware leaves a verified Stripe event (TransformContext.verifiedEvents). */
  verifiedEvents?: TransformContext['verifiedEvents'];
}

/** The pure heart of apply for one file: source text in, wired source text out, with what was done and left. */
export function wireSource(file: string, text: string, targets: readonly WiringTarget[], options: WireSourceOptions): { text: string; edits: Edit[]; manual: ManualStep[]; stale: string[]; principal?: string[] } {
  const style = importStyleFor(file, text, options.scaffoldDir, options.imports);
  const sf = parseSource(file, text, style);
  const context: TransformContext = { style, anyLine: options.anyLine ?? false, scaffoldModules: options.scaffoldModules, ...(options.graphql ? { graphql: options.graphql } : {}), ...(options.routingControllers ? { routingControllers: options.routingControllers } : {}), ...(options.routeAuthentication ? { routeAuthentication: options.routeAuthentication } : {}), ...(options.verifiedEvents ? { verifiedEvents: options.verifiedEvents } : {}) };
  const out: { edits: Edit[]; manual: ManualStep[]; stale: string[]; principal?: string[] } = { edits: [], manual: [], stale: [] };
  // Every recorded line is resolved on the untouched text first: edits (an import at the top) shift lines.
  const resolved = targets.map((target) => {
    if (TRIGGER_TRANSFORMS[target.trigger]) return triggerOccurrence(sf, target, context.anyLine);
    if (procedureWithoutRoute(target, options.framework)) return target;
    const found = options.framework === 'nestjs' ? locateNestMethod(sf, target, context.anyLine) : locateRoute(sf, target, context.anyLine);
    return found && 'occurrence' in found && found.occurrence !== undefined ? { ...target, occurrence: found.occurrence } : target;
  });
  // Unresolved ones first, so their stale / manual report also describes the untouched text.
  for (const target of [...resolved].sort((a, b) => Number(a.occurrence !== undefined) - Number(b.occurrence !== undefined) || b.line - a.line)) {
    const route = ROUTE_TRANSFORMS[options.framework];
    const browserGet = browserNavigation(target);
    if (browserGet) {
      out.manual.push(browserGet);
      continue;
    }
    const procedure = procedureWithoutRoute(target, options.framework);
    if (procedure) {
      out.manual.push(procedure);
      continue;
    }
    const outcome = (TRIGGER_TRANSFORMS[target.trigger] ?? (target.trigger === 'webhook' ? wireVerifiedWebhook(route, options.framework, verifiedWebhookProvider(target.provider)) : route))(sf, target, context);
    if (outcome.stale) out.stale.push(outcome.stale);
    if (outcome.principal) out.principal ??= outcome.principal;
    out.edits.push(...outcome.edits);
    out.manual.push(...outcome.manual);
  }
  return { text: sf.getFullText(), ...out };
}

/**
 * A tRPC procedure (or a GraphQL mutation) in an app whose HTTP framework apply wires: it has no route of its own
 * for that framework's middleware (the whole API is one route), so it is claimed inside the procedure by hand, as
 * the scaffold README shows. The plain wrapper and NestJS's resolver pass handle theirs.
 */
function procedureWithoutRoute(target: WiringTarget, framework: ApplyFramework): ManualStep | undefined {
  if (target.trigger !== 'http' || framework === 'plain') return undefined;
  if (target.transport !== 'trpc' && !(target.transport === 'graphql' && framework !== 'nestjs')) return undefined;
  const kind = target.transport === 'trpc' ? 'a tRPC procedure' : 'a GraphQL mutation';
  return {
    action: target.action,
    file: target.file,
    line: target.line,
    reason: `${kind} has no route of its own for the ${framework} middleware: claim inside it with idempotency.core.runOnce(ACTIONS.${target.codeName}, { scope, key, fingerprint }, (signal, context) => work(context)), the key read from the context your API builds from the request's Idempotency-Key header (the scaffold README shows the fingerprint)`,
  };
}

/**
 * A GET (or HEAD) action keyed by a client header: what reaches it is a link, a redirect back from a provider or a
 * prefetch, none of which sends an Idempotency-Key, so a mounted middleware would answer every visit 400. Not wired;
 * the step says what would make it protectable. A GET keyed by fields of the request itself (derived) is wired.
 */
function browserNavigation(target: WiringTarget): ManualStep | undefined {
  const method = target.method?.toUpperCase();
  if (target.trigger !== 'http' || (method !== 'GET' && method !== 'HEAD') || target.keySource === 'derived') return undefined;
  return {
    action: target.action,
    file: target.file,
    line: target.line,
    reason: `${method} ${target.path ?? ''} changes state on a ${method}: links, redirects back from a provider and prefetches reach it without an Idempotency-Key header, so the middleware would answer every visit 400. Not wired: move the effect behind a POST that sends the key (a form or fetch), or key the action by a value each visit carries ("key": { "source": "derived", "from": ["<query or path field>"] }, e.g. the order token a provider's return URL brings), then run apply again`,
  };
}

export interface FileChange {
  path: string;
  /** Undefined for a file apply creates. */
  before?: string;
  after: string;
}

export interface ApplyPlan {
  changes: FileChange[];
  edits: Edit[];
  manual: ManualStep[];
  /** Why apply refuses: files that moved on since the inspection recorded the actions' locations. */
  stale: string[];
  /** Actions this run looked at (all, or the one --action named). */
  actions: string[];
  /** Actions whose handler's writes this run moved onto the claim's transaction: the config gets "mode": "transactional". */
  transactional: string[];
  record: ApplyRecord;
  /**
   * `manual` again for the files as they will be written (after the project's prettier): the recorded findings'
   * lines follow the final text.
   */
  relist(final: readonly FileChange[]): ManualStep[];
}

/** Findings the transforms themselves resolve (the route gets wrapped, inline Stripe calls get their key). */
const APPLY_FIXES = new Set(['action-not-wrapped']);
/** The finding each non-HTTP trigger's wrap fixes (the event-id processor, the consumer wrapper, the cron guard). */
const TRIGGER_FIX: Partial<Record<string, string>> = { webhook: 'webhook-without-event-dedupe', consumer: 'consumer-without-dedupe', cron: 'cron-without-overlap-guard' };

const parseSourceLocation = (source: string) => {
  const match = /^(.+?):(\d+)(?::\d+)?$/.exec(source.trim());
  return match ? { file: match[1]!, line: Number(match[2]) } : undefined;
};

/** The project's tsconfig aliases (comments, `extends` and inherited `paths` included), read by the profile's reader. */
async function projectImports(root: string): Promise<ProjectImports> {
  return Promise.resolve({ ...projectImportsAt(root), packageOf: packageFinder(root) });
}

/** findPackageRoot, remembered per folder: the import style asks it for every file apply edits. */
function packageFinder(root: string): (file: string) => string {
  const known = new Map<string, string>();
  return (file) => {
    const dir = path.posix.dirname(file);
    let found = known.get(dir);
    if (found === undefined) known.set(dir, (found = findPackageRoot(root, file)));
    return found;
  };
}

/** Sorted actions → the wiring each needs, or the manual step saying why apply leaves it. */
function targetsOf(model: DesignModel, config: Config, framework: ApplyFramework | undefined, only: string | undefined, owns?: ReadonlySet<string>): { targets: WiringTarget[]; manual: ManualStep[]; findings: Map<ManualStep, FindingDesign> } {
  const targets: WiringTarget[] = [];
  const manual: ManualStep[] = [];
  // Which manual steps are recorded findings: planApply re-runs their rules on the edited text (relocateFindings).
  const findings = new Map<ManualStep, FindingDesign>();
  for (const [index, action] of model.actions.entries()) {
    if (only !== undefined && action.name !== only) continue;
    // With one scaffold per package, the actions of another package are that scaffold's.
    if (owns !== undefined && !owns.has(action.name)) continue;
    const source = config.actions[index]?.source ?? action.source;
    const location = source ? parseSourceLocation(source) : undefined;
    if (!location) {
      manual.push({ action: action.name, reason: 'no source location: set actions[].source to "file:line" of the handler (init fills it from the inspection)' });
      continue;
    }
    const file = normalizeRelative(location.file, 'read');
    // Open findings init recorded in this action's file: their fixes need judgement (a business time sent to the
    // provider, a race), so they are listed with the rule's fix; APPLY_FIXES are the transforms' own. A per-attempt
    // key or label the transforms make stable is dropped from the list once the rule no longer sees it.
    // A finding several actions share (a helper their handlers call) is listed once, under the first of them this
    // run applies (with --action, that one), naming the others so none of them looks clean.
    // A trigger's own missing-dedupe finding is what its wrap fixes; when the wrap cannot be made, the transform's
    // manual step says so, so it is never listed twice.
    const listedHere = (f: FindingDesign) => (f.actions.find((name) => only === undefined || name === only) ?? action.name) === action.name;
    for (const finding of action.findings.filter((f) => f.status === 'open' && listedHere(f) && !APPLY_FIXES.has(f.ruleId) && TRIGGER_FIX[action.trigger] !== f.ruleId)) {
      const others = finding.actions.filter((name) => name !== action.name);
      const shared = others.length > 0 ? ` (also in the code of ${others.join(', ')})` : '';
      const step = { action: action.name, file: finding.file, line: finding.line, reason: `${finding.ruleId}: ${finding.fix}${shared}` };
      findings.set(step, finding);
      manual.push(step);
    }
    // A worker without a web framework ('plain': a bare kafkajs or BullMQ process) gets the plain instance, which is
    // all the consumer and cron wrappers take (`idempotency.core`); only a framework apply has no instance for is left.
    if ((action.trigger === 'consumer' || action.trigger === 'cron') && !framework) {
      manual.push({ action: action.name, file, line: location.line, reason: `no app instance apply can write for ${model.stack.frameworkLabel}: wrap the handler with the ${action.trigger === 'cron' ? 'CronGuard (cron/guard.ts)' : 'consumer wrapper (consumers/)'} as TRIGGERS.md shows` });
      continue;
    }
    if (action.trigger === 'consumer' || action.trigger === 'cron') {
      targets.push({ action: action.name, codeName: action.codeName, trigger: action.trigger, file, line: location.line, scope: action.scope });
      continue;
    }
    if (!framework) {
      manual.push({ action: action.name, file, line: location.line, reason: `no generated adapter for ${model.stack.frameworkLabel}: wire the middleware the document shows by hand` });
      continue;
    }
    // apply finds a handler through its route; one mounted where the code does not say (routes registered in a
    // loop, a route table) has none in the config.
    if (action.path === undefined && framework !== 'plain') {
      const example = action.trigger === 'webhook' ? 'POST /webhooks/stripe' : 'POST /orders';
      manual.push({ action: action.name, file, line: location.line, reason: `no route for this handler: set actions[].route (e.g. "${example}") to where it is mounted and run apply again, or wire it by hand as ${action.trigger === 'webhook' ? 'TRIGGERS.md' : 'the README in the scaffold'} shows` });
      continue;
    }
    targets.push({ action: action.name, codeName: action.codeName, trigger: action.trigger, method: (action.method ?? 'POST').toUpperCase(), path: action.path, file, line: location.line, scope: action.scope, keySource: action.key.source, ...(action.key.field !== undefined ? { keyField: action.key.field, forms: action.key.forms ?? [] } : {}), ...(action.provider ? { provider: action.provider } : {}), ...(action.transport ? { transport: action.transport } : {}) });
  }
  return { targets, manual, findings };
}

/**
 * Files apply writes into a JavaScript scaffold (instance, webhookEvent) are rendered as TypeScript and transpiled
 * like the scaffold itself, to the module system the generated index.js uses.
 */
async function javaScriptEmitter(text: string, project: { root: string; dir: string; testFramework: string }): Promise<(source: string, fileName: string) => string> {
  const [{ transpileToJavaScript }, { readProjectProfile }, { lowerToBabel6 }] = await Promise.all([
    import('../scaffold/javascript/transpile.js'),
    import('../scaffold/profile/readProjectProfile.js'),
    import('../scaffold/profile/babel6Syntax.js'),
  ]);
  const moduleType = /^\s*(export|import)\s/m.test(text) ? 'module' : 'commonjs';
  // Under Jest 23 babel-jest parses every file the app loads with Babel 6, apply's own files included.
  const { jestBabel6 } = await readProjectProfile({ root: project.root, dir: project.dir, language: 'javascript', testFramework: project.testFramework });
  return (source, fileName) => {
    const code = transpileToJavaScript(source, moduleType, fileName);
    return jestBabel6 ? lowerToBabel6(code, fileName.replace(/\.ts$/, '.js')) : code;
  };
}

/**
 * Files apply writes into a TypeScript scaffold import its modules the way the scaffold's own index.ts does: a
 * CommonJS project without the `.js` suffix (generate chose that for it) cannot load `./index.js` under ts-node or
 * ts-jest, where only index.ts exists.
 */
function typeScriptEmitter(text: string): (source: string) => string {
  return (source) => matchRelativeImports(source, text);
}

/** `./x.js` specifiers in `source` made extensionless when the scaffold's `reference` imports its siblings so. */
export function matchRelativeImports(source: string, reference: string): string {
  const specifiers = [...reference.matchAll(/\bfrom\s+["'](\.\.?\/[^"']+)["']/g)].map((m) => m[1]!);
  if (specifiers.length === 0 || specifiers.some((s) => /\.(m|c)?js$/.test(s))) return source;
  return source.replace(/(\bfrom\s+["'])(\.\.?\/[^"']+)\.js(["'])/g, '$1$2$3');
}

/**
 * Where the project's own code connects to the store's database (PostgreSQL / MySQL only), so the instance's pool
 * reads the same variables; read only when an instance is about to be written.
 */
async function connectionFor(root: string, storeId: string | undefined, scaffoldDir: string, packageDir = ''): Promise<{ connection?: StoreConnection }> {
  if (storeId === 'redis') {
    const { findRedisConnection } = await import('../inspect/stack/redisConnection.js');
    const connection = await findRedisConnection(root, scaffoldDir, packageDir);
    return connection ? { connection } : {};
  }
  if (storeId !== 'postgres' && storeId !== 'mysql') return {};
  const { findStoreConnection } = await import('../inspect/stack/findStoreConnection.js');
  const connection = await findStoreConnection(root, storeId, scaffoldDir);
  return connection ? { connection } : {};
}

/**
 * Whether the project puts the caller on `request.user`, as the generated principal reads it: an assignment
 * (`request.user = …`, `req.user = …`), a `user` declared on the framework's request type, or a library that sets it
 * (Passport, @fastify/jwt, express-jwt, @nestjs/passport).
 */
async function setsRequestUser(root: string, texts: () => Promise<readonly string[]>): Promise<boolean> {
  const dependencies = await projectDependencies(root);
  if (['passport', '@fastify/jwt', 'fastify-jwt', 'express-jwt', '@nestjs/passport', '@fastify/passport'].some((name) => dependencies.has(name))) return true;
  return assignsRequestUser(await texts());
}

/**
 * The root modules that get `...idempotencyProviders(idempotency)`, each with the first action it is wired for, and
 * a manual step for every target whose application the module graph does not tell. One booted module (the common
 * case) is wired whatever the graph says; of several, each one whose application holds a target, and a root that
 * another wired root imports is enough for both (registered twice, the interceptor would claim the key twice).
 */
/**
 * Controller methods whose keys are scoped to a caller though nothing authenticates them (a sign-up route): every
 * request would be answered 401, so each gets the step Express routes get.
 */
async function unauthenticatedNestRoutes(root: string, files: readonly ProjectFile[], targets: readonly WiringTarget[], changes: readonly FileChange[], scaffoldDir: string, imports: ProjectImports): Promise<ManualStep[]> {
  const out: ManualStep[] = [];
  for (const { target, unauthenticated } of await nestRoutesWithoutAuthentication(root, files, targets, changes, scaffoldDir, imports)) {
    if (unauthenticated.optOut !== undefined) {
      out.push({ action: target.action, file: target.file, line: target.line, reason: `the route opts out of the global guard with ${unauthenticated.optOut}${unauthenticated.on === 'controller' ? ' on its controller' : ''}, so nothing authenticates it before the handler, but the action's keys are scoped per ${target.scope}: set "scope": "global" for it in the config (and regenerate), or take ${unauthenticated.optOut} off the ${unauthenticated.on ?? 'route'} or cover the route with your auth middleware's forRoutes` });
    } else if (unauthenticated) {
      out.push({ action: target.action, file: target.file, line: target.line, reason: `${NO_AUTHENTICATION}, but the action's keys are scoped per ${target.scope}: set "scope": "global" for it in the config (and regenerate), or guard the route (@UseGuards) or cover it with your auth middleware's forRoutes` });
    }
  }
  return out;
}

/** The scoped HTTP targets whose controller method nothing authenticates (nestAuthentication.ts), with the opt-out it uses. */
async function nestRoutesWithoutAuthentication(root: string, files: readonly ProjectFile[], targets: readonly WiringTarget[], changes: readonly FileChange[], scaffoldDir: string, imports: ProjectImports): Promise<Array<{ target: WiringTarget; unauthenticated: { optOut?: string; on?: 'route' | 'controller' } }>> {
  const scoped = targets.filter((t) => t.trigger === 'http' && t.scope !== undefined && t.scope !== 'global');
  if (scoped.length === 0) return [];
  const sources = files.filter((f) => f.kind === 'source');
  const texts = await Promise.all(sources.map((f) => projectFile(root, f.rel)));
  // Every source file: the opt-out decorators (`@Public()`) are followed through imports and barrels to their declaration.
  const project = readNestAuthentication(sources.flatMap((f, i) => (texts[i] === undefined ? [] : [{ file: f.rel, text: texts[i]! }])), { aliases: imports.aliases });
  const out: Array<{ target: WiringTarget; unauthenticated: { optOut?: string; on?: 'route' | 'controller' } }> = [];
  for (const target of scoped) {
    const text = changes.find((c) => c.path === target.file)?.after ?? (await readInside(root, target.file).catch(() => undefined));
    const verb = VERBS[target.method ?? 'POST'];
    if (text === undefined || !verb) continue;
    const method = locateNestMethod(parseSource(target.file, text, importStyleFor(target.file, text, scaffoldDir, imports)), target, true)?.method;
    const unauthenticated = method ? nestUnauthenticatedRoute(method, routeOf(method, verb), project, target.method ?? 'POST') : undefined;
    if (unauthenticated) out.push({ target, unauthenticated });
  }
  return out;
}

/**
 * For init: the NestJS actions whose controller method nothing authenticates (no guard on it or its controller, no
 * global guard, or an opt-out of it such as `@Public()`, no auth middleware's forRoutes), by the rules apply's step
 * uses. Keyed per caller, every request to them would be answered 401 (there is no caller), so init keys them globally.
 */
export async function publicNestActions(root: string, config: Config, model: DesignModel): Promise<Array<{ action: string; optOut?: string }>> {
  if (model.stack.framework !== 'nestjs') return [];
  const { targets } = targetsOf(model, config, 'nestjs', undefined);
  if (!targets.some((t) => t.trigger === 'http' && t.scope !== undefined && t.scope !== 'global')) return [];
  const dir = config.scaffold === false ? 'src/idempotency' : normalizeRelative(config.scaffold.dir);
  const imports = await projectImports(root);
  const { files } = await projectFiles(root);
  const found = await nestRoutesWithoutAuthentication(root, files, targets, [], dir, imports);
  return found.map(({ target, unauthenticated }) => ({ action: target.action, ...(unauthenticated.optOut ? { optOut: unauthenticated.optOut } : {}) }));
}

async function nestRootsToWire(root: string, files: readonly ProjectFile[], targets: readonly WiringTarget[], imports: ProjectImports, scaffoldDir: string): Promise<{ wire: Array<NestRoot & { action: string }>; manual: ManualStep[] }> {
  const apps = await readNestApplications(root, files.map((f) => f.rel), imports.aliases, scaffoldDir);
  if (apps.roots.length === 0) return { wire: [], manual: [{ action: targets[0]!.action, reason: 'no single root module found (NestFactory.create(AppModule)): add ...idempotencyProviders(idempotency) to its providers by hand' }] };
  if (apps.roots.length === 1) return { wire: [{ ...apps.roots[0]!, action: targets[0]!.action }], manual: [] };
  const chosen = new Map<NestRoot, string>();
  const manual: ManualStep[] = [];
  const candidates = apps.roots.map((r) => `${r.name} (${r.file})`).join(', ');
  for (const target of targets) {
    const owners = await apps.rootsOf(target.file, target.line);
    if (owners.length === 0) manual.push({ action: target.action, file: target.file, line: target.line, reason: `no module apply can read lists this handler's class, so its application is unknown among ${candidates}: add ...idempotencyProviders(idempotency) to the providers of the root module that serves it by hand` });
    for (const owner of owners) if (!chosen.has(owner)) chosen.set(owner, target.action);
  }
  // Of two roots importing each other, the first by file and name keeps it.
  const covers = (inner: NestRoot, outer: NestRoot) => inner !== outer && apps.imports(outer, inner) && (!apps.imports(inner, outer) || `${inner.file}#${inner.name}` < `${outer.file}#${outer.name}`);
  const wire = [...chosen].filter(([outer]) => ![...chosen.keys()].some((inner) => covers(inner, outer)));
  return { wire: wire.map(([r, action]) => ({ ...r, action })), manual };
}

/**
 * The project's own tests that call a protected route get a key per request (projectTests.ts): once the route is
 * wired, a request without one is answered 400, and the suite that passed before apply would fail after it.
 */
async function keyProjectTests(root: string, targets: readonly WiringTarget[], changes: FileChange[], options: { scaffoldDir: string; imports: ProjectImports; header: string; runner: string; memory: boolean; inPackage?: (file: string) => boolean; packageDir?: string }): Promise<{ edits: Edit[]; manual: ManualStep[] }> {
  const routes: KeyedRoute[] = targets.flatMap((t) => (t.trigger === 'http' && t.path !== undefined && t.keySource !== 'derived' ? [{ action: t.action, method: t.method ?? 'POST', path: t.path }] : []));
  const out = { edits: [] as Edit[], manual: [] as ManualStep[] };
  if (routes.length === 0) return out;
  const { files } = await projectFiles(root, { tests: true });
  for (const file of files) {
    if (file.rel === options.scaffoldDir || file.rel.startsWith(`${options.scaffoldDir}/`)) continue;
    // Another package's tests are its own scaffold's to key.
    if (options.inPackage && !options.inPackage(file.rel)) continue;
    const existing = changes.find((c) => c.path === file.rel);
    const text = existing?.after ?? (await readInside(root, file.rel).catch(() => undefined));
    if (text === undefined) continue;
    const keyed = keyTestRequests(file.rel, text, routes, options.header, importStyleFor(file.rel, text, options.scaffoldDir, options.imports));
    out.edits.push(...keyed.edits);
    out.manual.push(...keyed.manual);
    if (keyed.text === text) continue;
    if (existing) existing.after = keyed.text;
    else changes.push({ path: file.rel, before: text, after: keyed.text });
  }
  // The keyed requests also need a store: the instance's memory store is chosen by NODE_ENV=test, which Jest and
  // Vitest set and node:test and Mocha do not.
  const first = out.edits[0];
  if (first && options.memory && options.runner !== 'jest' && options.runner !== 'vitest' && !(await testScriptChoosesMemoryStore(root, options.packageDir))) {
    const runner = options.runner === 'node-test' ? 'node:test' : options.runner === 'mocha' ? 'Mocha' : 'your test runner';
    out.manual.push({ action: first.action, file: first.file, reason: `your tests now send a key to the protected routes; they also need a store: the instance uses the memory store when NODE_ENV=test, which ${runner} does not set. Run them with IDEMPOTENCY_STORE=memory (e.g. "test": "IDEMPOTENCY_STORE=memory ${options.runner === 'mocha' ? 'mocha' : 'node --test'}"), or give them the real store (its connection variable, with the migration applied)` });
  }
  return out;
}

/** Whether package.json's test scripts choose the memory store themselves (`NODE_ENV=test mocha`, `cross-env IDEMPOTENCY_STORE=memory …`). */
async function testScriptChoosesMemoryStore(root: string, packageDir?: string): Promise<boolean> {
  const text = (await readInside(root, packageDir ? `${packageDir}/package.json` : 'package.json').catch(() => undefined)) ?? '';
  try {
    const scripts = (JSON.parse(text) as { scripts?: Record<string, unknown> }).scripts ?? {};
    return Object.entries(scripts).some(([name, script]) => /test/i.test(name) && typeof script === 'string' && /\b(NODE_ENV=(["']?)test\2|IDEMPOTENCY_STORE=(["']?)memory\3)(\s|$)/.test(script));
  } catch {
    return false;
  }
}

export interface PlanApplyOptions {
  config: Config;
  model: DesignModel;
  /** Only this action (--action NAME). */
  action?: string;
}

/**
 * Reads the files the actions point at, runs the transforms in memory and returns every change with its text before
 * and after. Pure apart from reading: nothing is written here. In a repository whose actions live in several packages,
 * generate gave each package its own scaffold (planScaffolds): each action is wired with its own package's.
 */
export function planApply(root: string, options: PlanApplyOptions): Promise<ApplyPlan> {
  return withProjectScan(() => planProject(root, options));
}

async function planProject(root: string, options: PlanApplyOptions): Promise<ApplyPlan> {
  const { config, model } = options;
  if (config.scaffold === false) throw new UserError('apply wires the generated scaffolding into your code, but the config turns scaffolding off.', 'Set "scaffold": { "dir": "src/idempotency" } in idempotency.config.json and run `idempotency-builder generate` first.');
  if (options.action !== undefined && !model.actions.some((a) => a.name === options.action)) {
    throw new UserError(`--action ${options.action}: no such action in the config.`, `Use one of: ${model.actions.map((a) => a.name).join(', ')}.`);
  }
  if (model.stack.language !== 'typescript' && model.stack.language !== 'javascript') throw new UserError('apply edits TypeScript and JavaScript projects only.', 'Wire the middleware as the document shows; the generated README lists the mounts.');
  // JavaScript projects get the scaffold as .js (ES modules or CommonJS, as generate chose); apply's own files follow it.
  const ext = model.stack.language === 'javascript' ? '.js' : '.ts';
  const dir = normalizeRelative(config.scaffold.dir);
  const record = await readApplyRecord(root);
  const scaffolds = planScaffolds(root, model, dir);
  if (scaffolds.length > 1) return assemblePlan(root, options, record, mergeScaffoldPlans(await planPackageScaffolds(root, scaffolds, { options, ext, record })));
  // The scaffold's index, read once: it decides how apply's own files import and whether the instance can use the
  // memory store (an index generated by an older release, or edited since, may not export it).
  const index = await readInside(root, `${dir}/index${ext}`).catch(() => undefined);
  if (index === undefined) throw new UserError(`The scaffolding is not in ${dir} yet.`, 'Run `idempotency-builder generate` first, then apply.');
  // The scaffold's package may be a folder of the repository (`server/` beside `client/`, no root package): its
  // tsconfig and "type" decide how the edited files import the scaffold, not the repository root's.
  const packageDir = scaffolds[0]?.packageDir ?? '';
  return assemblePlan(root, options, record, await planScaffoldApply(root, { options, model, dir, ext, index, record, imports: await packageImports(root, packageDir), ...(packageDir === '' ? {} : { packageDir }) }));
}

/**
 * One scaffold per package (planScaffolds): each wires the actions of its package, with its package's tsconfig aliases;
 * a package whose scaffold is not on disk (generate not run since its actions were added) leaves its actions as
 * manual steps saying so.
 */
async function planPackageScaffolds(root: string, scaffolds: readonly PlannedScaffold[], input: Pick<ScaffoldApplyInput, 'options' | 'ext' | 'record'>): Promise<ScaffoldPlan[]> {
  const { options, ext } = input;
  const ownerOf = packageOwner(scaffolds, options.config.scaffold === false ? '' : normalizeRelative(options.config.scaffold.dir));
  const parts: ScaffoldPlan[] = [];
  const missing: string[] = [];
  for (const scaffold of scaffolds) {
    const owns = new Set(scaffold.model.actions.map((a) => a.name).filter((name) => options.action === undefined || name === options.action));
    if (owns.size === 0) continue;
    // A plain JavaScript package beside the TypeScript app has its scaffold in JavaScript (planScaffolds).
    const own = scaffold.model.stack.language === 'javascript' ? '.js' : ext;
    const index = await readInside(root, `${scaffold.dir}/index${own}`).catch(() => undefined);
    if (index === undefined) {
      missing.push(scaffold.dir);
      parts.push({ ...emptyScaffoldPlan(scaffold.dir), manual: notGeneratedSteps(scaffold, owns, options) });
      continue;
    }
    const imports = await packageImports(root, scaffold.packageDir);
    parts.push(await planScaffoldApply(root, { ...input, ext: own, model: scaffold.model, dir: scaffold.dir, index, imports, owns, inPackage: (file) => ownerOf(file) === scaffold, packageDir: scaffold.packageDir }));
  }
  if (parts.length > 0 && missing.length === parts.length) throw new UserError(`The scaffolding is not in ${missing.join(', ')} yet.`, 'Run `idempotency-builder generate` first (it writes one scaffold per package), then apply.');
  return parts;
}

/** The scaffold whose package holds a project file (the innermost); a file in none goes with scaffold.dir's. */
function packageOwner(scaffolds: readonly PlannedScaffold[], configuredDir: string): (file: string) => PlannedScaffold {
  const byDepth = [...scaffolds].sort((a, b) => b.packageDir.length - a.packageDir.length);
  const fallback = scaffolds.find((s) => s.dir === configuredDir) ?? scaffolds[0]!;
  return (file) => byDepth.find((s) => s.packageDir === '' || file.startsWith(`${s.packageDir}/`)) ?? fallback;
}

/** Each action of a package whose scaffold is missing on disk: what to run. */
function notGeneratedSteps(scaffold: PlannedScaffold, owns: ReadonlySet<string>, options: PlanApplyOptions): ManualStep[] {
  const where = scaffold.packageDir === '' ? 'the root package' : `its package (${scaffold.packageDir})`;
  return options.model.actions.flatMap((action, index) => {
    if (!owns.has(action.name)) return [];
    const source = options.config.actions[index]?.source ?? action.source;
    const location = source ? parseSourceLocation(source) : undefined;
    return [{ action: action.name, ...(location ? { file: normalizeRelative(location.file, 'read'), line: location.line } : {}), reason: `${where} has no scaffold in ${scaffold.dir} yet: run \`idempotency-builder generate\` (it writes one scaffold per package), then apply again` }];
  });
}

/**
 * The aliases and import habit of a workspace package: its own tsconfig.json when it has one (aliases made relative
 * to the project root, as apply's paths are), else the root's.
 */
async function packageImports(root: string, packageDir: string): Promise<ProjectImports> {
  if (packageDir === '' || (await readInside(root, `${packageDir}/tsconfig.json`).catch(() => undefined)) === undefined) return projectImports(root);
  const own = projectImportsAt(path.join(root, packageDir));
  return { ...own, packageOf: packageFinder(root), aliases: own.aliases.map((alias) => ({ ...alias, dir: alias.dir === '' ? packageDir : `${packageDir}/${alias.dir}` })) };
}

interface ScaffoldApplyInput {
  options: PlanApplyOptions;
  /** The design restricted to this scaffold's package (the whole design when there is one scaffold). */
  model: DesignModel;
  dir: string;
  ext: '.ts' | '.js';
  /** The scaffold's index as read. */
  index: string;
  record: ApplyRecord;
  imports: ProjectImports;
  /** With one scaffold per package: the actions this one wires, and whether a project file is in its package. */
  owns?: ReadonlySet<string>;
  inPackage?: (file: string) => boolean;
  /** The package folder whose package.json holds its test scripts ('' or unset: the root's). */
  packageDir?: string;
}

/** The wiring of one scaffold with the actions of its package, before findings are relisted over the whole plan. */
async function planScaffoldApply(root: string, input: ScaffoldApplyInput): Promise<ScaffoldPlan> {
  const { options, model, dir, ext, index, record, imports } = input;
  const { config } = options;
  const present = async (name: string) => (await readInside(root, `${dir}/${name}${ext}`).catch(() => undefined)) !== undefined;
  const emit = ext === '.js' ? await javaScriptEmitter(index, { root, dir, testFramework: model.stack.testFramework }) : typeScriptEmitter(index);
  const memory = /\bcreateMemoryStore\b/.test(index);
  const scaffoldModules = new Set<string>(['index']);
  for (const name of ['providers', 'instance', 'next', WEBHOOK_EVENT_MODULE, CONTROLLER_CLAIM_MODULE, ...TRIGGER_MODULES]) if (await present(name)) scaffoldModules.add(name);
  // An unknown framework whose actions are all GraphQL / tRPC / consumers / crons got the plain wrapper (referenceFramework).
  const plain = model.stack.framework === 'none' || (referenceFramework(model.stack, model.actions) === 'none' && (await present('plain')));
  const framework = plain ? 'plain' : (['express', 'fastify', 'nestjs', 'nextjs', 'koa', 'hono'] as const).find((f) => f === model.stack.framework);
  const graphql = framework === 'plain' && model.actions.some((a) => a.transport === 'graphql') ? await graphqlOf(root, model.keys.header) : undefined;
  const { targets, manual, findings } = targetsOf(options.model, config, framework, options.action, input.owns);
  const routingControllers = framework === 'express' || framework === 'koa' ? await routingControllersOf(root, model.keys.header) : undefined;
  // Read once, and only when a route's keys are scoped to a caller: whether anything authenticates it (init's reading).
  const routeAuthentication = (framework === 'express' || framework === 'koa' || framework === 'fastify' || framework === 'hono') && targets.some((t) => t.trigger === 'http' && t.scope !== undefined && t.scope !== 'global') ? await readRouteAuthentication(root) : undefined;
  // Stripe webhooks whose route's middleware verifies the delivery and leaves the event on the request.
  const verifiedEvents = targets.some((t) => t.trigger === 'webhook' && (t.provider ?? 'stripe') === 'stripe') ? middlewareVerifiedEvents(await projectTexts(root)) : undefined;
  const changes: FileChange[] = [];
  const edits: Edit[] = [];
  const stale: string[] = [];
  let principal: string[] | undefined;
  // Where the thread pass said in its own step why a provider call in a service is not keyed.
  const specificAt = new Set<string>();

  // Every target file as read and as wired (the same text when nothing changed), for relocateFindings.
  const texts: Array<{ path: string; before: string; after: string }> = [];
  const byFile = new Map<string, WiringTarget[]>();
  for (const target of targets) byFile.set(target.file, [...(byFile.get(target.file) ?? []), target]);
  for (const [file, list] of [...byFile].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const before = await readInside(root, file);
    if (before === undefined) {
      stale.push(`${file} changed since inspection: the file is gone`);
      continue;
    }
    const wired = wireSource(file, before, list, { framework: framework!, scaffoldDir: dir, imports, scaffoldModules, anyLine: record.files[file] === sha256(before), ...(graphql ? { graphql } : {}), ...(routingControllers ? { routingControllers } : {}), ...(routeAuthentication ? { routeAuthentication } : {}), ...(verifiedEvents ? { verifiedEvents } : {}) });
    texts.push({ path: file, before, after: wired.text });
    stale.push(...wired.stale);
    if (wired.principal) principal ??= wired.principal;
    edits.push(...wired.edits);
    manual.push(...wired.manual);
    if (wired.text !== before) changes.push({ path: file, before, after: wired.text });
  }
  // @hono/zod-openapi registrations: their route config takes the middleware, maybe in another file (openApiRoutes.ts).
  const openapi = framework === 'hono' && stale.length === 0 ? await wireOpenApiRoutes({ root, targets, manual, texts: new Map(texts.map((t) => [t.path, t])), anyLine: (file) => record.files[file] === sha256(texts.find((t) => t.path === file)?.before ?? ''), scaffoldDir: dir, imports, scaffoldModules }) : undefined;
  if (openapi) {
    for (let i = manual.length - 1; i >= 0; i--) if (openapi.decided.has(manual[i]!.action) && manual[i]!.reason.includes(OPENAPI_ROUTE)) manual.splice(i, 1);
    for (const [file, after] of openapi.texts) {
      const existing = changes.find((c) => c.path === file);
      if (existing) existing.after = after;
      else changes.push({ path: file, before: (await readInside(root, file))!, after });
      const text = texts.find((t) => t.path === file);
      if (text) text.after = after;
      else texts.push({ path: file, before: (await readInside(root, file))!, after });
    }
    edits.push(...openapi.edits);
    manual.push(...openapi.manual);
    stale.push(...openapi.stale);
    for (const read of openapi.principals.values()) principal ??= read;
  }
  if (framework && stale.length === 0) {
    // Handlers passed by name are keyed where they are declared (maybe a file no action points at).
    const named = await keyNamedHandlers({ root, framework, targets, texts: new Map(texts.map((t) => [t.path, t])), anyLine: (file) => record.files[file] === sha256(texts.find((t) => t.path === file)?.before ?? ''), scaffoldDir: dir, imports, scaffoldModules, ...(verifiedEvents ? { verifiedEvents } : {}) });
    for (const [file, after] of named.texts) {
      const existing = changes.find((c) => c.path === file);
      const before = existing?.before ?? (await readInside(root, file))!;
      if (existing) existing.after = after;
      else changes.push({ path: file, before, after });
      // The findings recorded in a handler's own file are re-run on it as keyed, as in a target file.
      const text = texts.find((t) => t.path === file);
      if (text) text.after = after;
      else texts.push({ path: file, before, after });
    }
    edits.push(...named.edits);
    manual.push(...named.manual);
    // A followed handler that reads the caller's id is authenticated, as an inline one reading it would be.
    for (const [action, read] of named.principals) {
      principal ??= read;
      const unauthenticated = manual.findIndex((m) => m.action === action && (m.reason.startsWith(NO_AUTHENTICATION) || m.reason.startsWith(READS_NO_PRINCIPAL)));
      if (unauthenticated >= 0) manual.splice(unauthenticated, 1);
    }
    // The route pass could not see a webhook handler passed by name; the named pass followed it and said what it did.
    for (const action of named.webhooks) {
      const deferred = manual.findIndex((m) => m.action === action && m.reason.startsWith(NAMED_WEBHOOK));
      if (deferred >= 0) manual.splice(deferred, 1);
    }
  }
  if (framework && framework !== 'plain' && stale.length === 0) {
    // Provider calls made in a service the handler calls get the handler's claim passed down to them (thread/threadProviderKeys.ts);
    // Next.js's wrappers, like Nest's interceptor, hold it for the call chain, where the service reads it.
    const threaded = await threadProviderKeys({ root, framework, targets, current: new Map(changes.map((c) => [c.path, c.after])), scaffoldDir: dir, imports, scaffoldModules });
    for (const [file, after] of threaded.texts) {
      const existing = changes.find((c) => c.path === file);
      if (existing) existing.after = after;
      else changes.push({ path: file, before: (await readInside(root, file))!, after });
    }
    // The findings recorded in the files holding the keyed calls are re-run on their text (this run's edits, or an
    // earlier run's): a call keyed through the new parameter is no longer listed.
    for (const [file, after] of threaded.holders) {
      if (texts.some((t) => t.path === file)) continue;
      const before = (await readInside(root, file))!;
      texts.push({ path: file, before, after });
    }
    edits.push(...threaded.edits);
    // The route pass's generic step goes where this pass keyed the calls or said why not in its own step: one step a place.
    // So does it where every provider call the action's code makes sets state a repeat leaves unchanged (a cancel, a
    // delete with only an id): nothing there needs a key, and the document says the duplicate costs nothing.
    const repeatsSafely = (action: string) => {
      const calls = model.actions.find((a) => a.name === action)?.code?.calls ?? [];
      return calls.length > 0 && calls.every((c) => c.repeatsSafely === true);
    };
    const superseded = (step: ManualStep) => {
      if (!NOT_IN_HANDLER.some((start) => step.reason.includes(start))) return false;
      if (threaded.threaded.has(step.action) || repeatsSafely(step.action)) return true;
      const provider = targets.find((t) => t.action === step.action)?.provider;
      const placed = threaded.placed.get(step.action);
      return placed !== undefined && (provider === undefined || (placed as ReadonlySet<string>).has(provider));
    };
    for (let i = manual.length - 1; i >= 0; i--) if (superseded(manual[i]!)) manual.splice(i, 1);
    manual.push(...threaded.manual);
    for (const at of threaded.stepsAt) specificAt.add(at);
  }
  // Server-rendered forms that post an action keyed by a hidden field: the field, and the views' key function.
  if (framework && wiresServerForms(framework) && stale.length === 0 && targets.some((t) => t.keyField !== undefined)) {
    const forms = await wireServerForms({ root, framework, targets, changes, scaffoldDir: dir, imports });
    edits.push(...forms.edits);
    manual.push(...forms.manual);
  } else if (stale.length === 0) {
    for (const target of targets.filter((t) => t.keyField !== undefined && t.trigger === 'http')) manual.push(formsByHand(framework, target));
  }
  // React components that call a client-keyed route (the API's own package or a separate frontend): the key header.
  if (framework && framework !== 'nextjs' && framework !== 'plain' && stale.length === 0) {
    const waiting = (t: WiringTarget) => manual.some((m) => m.action === t.action && m.reason.startsWith(CLIENT_KEY_STEP));
    const routes = targets.filter((t) => t.trigger === 'http' && t.transport === undefined && t.path !== undefined && waiting(t));
    if (routes.length > 0) {
      const { planClientCallers } = await import('./clientCallers.js');
      const clients = await planClientCallers({ root, routes, changes, scaffoldDir: dir, packageDir: input.packageDir ?? '', packageOf: imports.packageOf ?? packageFinder(root), imports, keyHeader: model.keys.header });
      for (const change of clients.changes) {
        const existing = changes.find((c) => c.path === change.path);
        if (existing) existing.after = change.after;
        else changes.push(change);
      }
      edits.push(...clients.edits);
      for (let i = manual.length - 1; i >= 0; i--) if (clients.found.has(manual[i]!.action) && manual[i]!.reason.startsWith(CLIENT_KEY_STEP)) manual.splice(i, 1);
      manual.push(...clients.manual);
    }
  }
  // Handlers whose own SQL writes can run on the claim's transaction (claimWrites.ts): the DBOS property.
  const transactional: string[] = [];
  const candidates = stale.length === 0 ? claimWriteCandidates(model, config, framework, targets) : [];
  if (candidates.length > 0) {
    const { auditProject } = await import('../findings/auditProject.js');
    const { actionFacts } = await auditProject(root, { config });
    const store = storeFor(model.stack.storeDatabase)?.id ?? '';
    const moved = await moveWritesOntoClaim({ root, framework: framework ?? '', store, candidates, facts: actionFacts, current: new Map(changes.map((c) => [c.path, c.after])), scaffoldDir: dir, imports });
    for (const [file, after] of moved.texts) {
      const existing = changes.find((c) => c.path === file);
      if (existing) existing.after = after;
      else changes.push({ path: file, before: (await readInside(root, file))!, after });
      const text = texts.find((t) => t.path === file);
      if (text) text.after = after;
    }
    edits.push(...moved.edits);
    manual.push(...moved.manual);
    transactional.push(...moved.transactional);
    const accessor = `${dir}/${CLAIM_TRANSACTION_MODULE}${ext}`;
    if (moved.transactional.length > 0 && !(await present(CLAIM_TRANSACTION_MODULE)) && (store === 'postgres' || store === 'mysql')) {
      changes.push({ path: accessor, after: emit(renderClaimTransaction(store), `${CLAIM_TRANSACTION_MODULE}.ts`) });
      edits.push({ action: moved.transactional[0]!, file: accessor, summary: "creates transactionOf(): the claim's open transaction, typed as the store's client, for handlers whose writes run on it" });
    }
  }
  // The interceptor serves the @Idempotent routes: a Nest worker with only processors and schedules needs none.
  if (framework === 'nestjs' && targets.some((t) => t.trigger === 'http') && stale.length === 0) {
    // One walk for both: the middleware and guards that authenticate routes, and the modules that boot apps.
    const { files: all } = await projectFiles(root);
    const files = input.inPackage ? all.filter((f) => input.inPackage!(f.rel)) : all;
    manual.push(...(await unauthenticatedNestRoutes(root, files, targets, changes, dir, imports)));
    const roots = await nestRootsToWire(root, files, targets, imports, dir);
    manual.push(...roots.manual);
    for (const rootModule of roots.wire) {
      const text = await readInside(root, rootModule.file);
      if (text === undefined) continue;
      // The root module may also be a file the route edits already touched: build on that text.
      const existing = changes.find((c) => c.path === rootModule.file);
      const style = importStyleFor(rootModule.file, text, dir, imports);
      const sf = parseSource(rootModule.file, existing?.after ?? text, style);
      const outcome = wireNestModule(sf, rootModule.name, rootModule.action, rootModule.file, { style, anyLine: false, scaffoldModules });
      edits.push(...outcome.edits);
      manual.push(...outcome.manual);
      if (existing) existing.after = sf.getFullText();
      else if (sf.getFullText() !== text) changes.push({ path: rootModule.file, before: text, after: sf.getFullText() });
    }
  }
  if (framework === 'nextjs') {
    const next = await planNextProject({ root, targets, changes, scaffoldDir: dir, imports, scaffoldModules, keyHeader: model.keys.header, stale: stale.length > 0, storeId: storeFor(model.stack.storeDatabase)?.id, memory, ...(scaffoldModules.has('instance') ? {} : await connectionFor(root, storeFor(model.stack.storeDatabase)?.id, dir)) });
    // The modules it creates in the scaffold import their siblings as the scaffold's own files do (`./index` when the
    // project resolves without extensions), as emit() does for the other frameworks' instance.
    for (const change of next.changes) changes.push(change.before === undefined && change.path.startsWith(`${dir}/`) ? { ...change, after: matchRelativeImports(change.after, index) } : change);
    edits.push(...next.edits);
    manual.push(...next.manual);
  }
  // Before the instance: the module the wired routing-controllers methods call imports it.
  const controllerClaim = `${dir}/${CONTROLLER_CLAIM_MODULE}${ext}`;
  if (!(await present(CONTROLLER_CLAIM_MODULE)) && changes.some((c) => c.after.includes(`/${CONTROLLER_CLAIM_MODULE}`))) {
    changes.push({ path: controllerClaim, after: emit(renderControllerClaim(), `${CONTROLLER_CLAIM_MODULE}.ts`) });
    edits.push({ action: targets[0]?.action ?? '', file: controllerClaim, summary: "creates runOnceInController(): the claim inside routing-controllers methods, answering its refusals as HttpErrors" });
  }
  const instance = `${dir}/instance${ext}`;
  // Also when a route is left to the user with `idempotency.<action>` to mount by hand: that binding lives in the instance.
  const mountByHand = manual.some((m) => m.reason.includes('idempotency.'));
  if (framework && framework !== 'nextjs' && !scaffoldModules.has('instance') && (changes.some((c) => c.after.includes('idempotency')) || mountByHand)) {
    const storeId = storeFor(model.stack.storeDatabase)?.id;
    const { connection } = await connectionFor(root, storeId, dir, input.packageDir);
    const http = targets.find((t) => t.trigger === 'http' && t.scope !== 'global');
    // Webhooks, consumers and jobs are scoped to the provider account or the system, never to a request's caller.
    const scoped = targets.some((t) => t.trigger === 'http' && t.scope !== 'global');
    // No wired handler reads the caller: where the project's own authentication puts it (`req.usuario = decoded`,
    // read elsewhere as `req.usuario.id`), unless it keeps to the `request.user` convention the instance reads anyway.
    // The project's source texts, read once for both questions below and only if one is asked.
    let texts: Promise<readonly string[]> | undefined;
    const sourceTexts = () => (texts ??= projectTexts(root));
    let userOnRequest: boolean | undefined;
    // A caller a NestJS decorator hands over is request.user's, which holds only where the project sets request.user.
    if (principal !== undefined && framework === 'nestjs' && !(userOnRequest = await setsRequestUser(root, sourceTexts))) principal = undefined;
    if (principal === undefined && http && (framework === 'express' || framework === 'fastify')) {
      userOnRequest = await setsRequestUser(root, sourceTexts);
      if (!userOnRequest) principal = assignedPrincipal(await sourceTexts()) ?? (framework === 'express' ? shopifyPrincipal(await sourceTexts()) : undefined);
    }
    const rendered = framework === 'plain' ? renderPlainInstance(storeId, memory, connection) : framework === 'koa' || framework === 'hono' ? renderMiddlewareInstance(framework, principal, storeId, memory, connection, scoped) : renderInstance(framework, principal, storeId, memory, connection, scoped);
    changes.push({ path: instance, after: emit(rendered, 'instance.ts') });
    edits.push({ action: targets[0]?.action ?? '', file: instance, summary: 'creates the app instance: createIdempotency() with the pool and the principal' });
    // The project's database settings are written in its code: the instance reads DATABASE_URL, which must name the same server.
    if (!connection && (storeId === 'postgres' || storeId === 'mysql')) {
      const { writtenConnectionAt } = await import('../inspect/stack/findStoreConnection.js');
      const written = await writtenConnectionAt(root, storeId, dir);
      if (written) manual.push({ action: targets[0]?.action ?? '', file: written.file, line: written.line, reason: `your code connects to ${storeId === 'postgres' ? 'PostgreSQL' : 'MySQL'} with settings written in it, which apply does not copy into another file (a password among them): the store's pool in ${instance} reads DATABASE_URL, so set it to the same server and database (where the store migration ran) before starting the app` });
    }
    // No wired handler reads the caller's identity and nothing in the project sets `request.user`: the principal
    // written is a guess, and a wrong one answers every protected request 401.
    // A routing-controllers method reads its caller from @CurrentUser(), not from the instance's principal.
    const inController = http !== undefined && changes.some((c) => c.path === http.file && c.after.includes(`${CONTROLLER_CLAIM_MODULE}`));
    if (principal === undefined && http && !inController && (framework === 'express' || framework === 'fastify' || framework === 'nestjs') && !(userOnRequest ?? (await setsRequestUser(root, sourceTexts)))) {
      manual.push({ action: http.action, file: instance, line: 1, reason: `no wired handler reads who the caller is and nothing in the project sets request.user, so the principal in ${instance} (request.user.id) is a guess: point it at what your authentication sets (a session, customer or tenant id) before deploying, or every protected request is answered 401` });
    }
    // Koa and Hono say so per wired route; a route left to the user has no such note, and the principal is the same guess.
    if (principal === undefined && http && (framework === 'koa' || framework === 'hono') && !edits.some((e) => e.file === http.file) && !openapi?.wired.has(http.action)) {
      const guess = framework === 'koa' ? 'ctx.state.user?.id' : "c.get('user')?.id";
      manual.push({ action: http.action, file: instance, line: 1, reason: `no handler apply wired reads who the caller is, so the principal in ${instance} (${guess}) is the framework's convention, a guess: point it at what your authentication sets before mounting the middleware, or set "scope": "global" for actions without a caller, or every protected request is answered 401` });
    }
  }
  const webhookEvent = `${dir}/${WEBHOOK_EVENT_MODULE}${ext}`;
  if (!scaffoldModules.has(WEBHOOK_EVENT_MODULE) && changes.some((c) => c.after.includes(`/${WEBHOOK_EVENT_MODULE}`))) {
    changes.push({ path: webhookEvent, after: emit(renderWebhookEvent(), `${WEBHOOK_EVENT_MODULE}.ts`) });
    edits.push({ action: targets.find((t) => t.trigger === 'webhook')?.action ?? '', file: webhookEvent, summary: 'creates onceForEvent(): the webhook processor\'s dedupe for events the route verified itself' });
  }
  // Last, so nothing above mistakes a test file's new key header for wiring.
  if (framework && stale.length === 0) {
    const keyed = await keyProjectTests(root, targets, changes, { scaffoldDir: dir, imports, header: model.keys.header, runner: model.stack.testFramework, memory, ...(input.inPackage ? { inPackage: input.inPackage } : {}), ...(input.packageDir ? { packageDir: input.packageDir } : {}) });
    edits.push(...keyed.edits);
    manual.push(...keyed.manual);
  }
  // Listed as they stand after the edits: what the transforms fixed goes, the rest points at the edited lines.
  // Later passes (the NestJS module, the Next.js project) may edit a target file again: their text is the final one.
  const edited = texts.map((t) => ({ ...t, after: changes.find((c) => c.path === t.path)?.after ?? t.after }));
  return { dir, changes, edits, manual, stale, transactional, texts: edited, findings, specificAt };
}

/** The plan from the scaffolds' parts: the recorded findings relisted over every edited file. */
async function assemblePlan(root: string, options: PlanApplyOptions, record: ApplyRecord, part: ScaffoldPlan): Promise<ApplyPlan> {
  const { changes, edits, manual, stale, transactional, texts: edited, findings, specificAt } = part;
  const written = (file: string) => record.files[file] === sha256(edited.find((t) => t.path === file)?.before ?? '');
  const dependencies = findings.size > 0 ? await projectDependencies(root) : new Map<string, string>();
  const relist = (final: readonly FileChange[]) =>
    findings.size > 0 ? withoutRestated(relocateFindings(manual, findings, edited.map((t) => ({ ...t, after: final.find((c) => c.path === t.path)?.after ?? t.after })), dependencies, written), specificAt) : manual;
  return { changes, edits, manual: relist(changes), stale, transactional, actions: options.model.actions.filter((a) => options.action === undefined || a.name === options.action).map((a) => a.name), record, relist };
}

/** The GraphQL server the project depends on, and where its resolvers' context holds the request (graphqlResolver.ts). */
async function graphqlOf(root: string, header: string): Promise<NonNullable<TransformContext['graphql']>> {
  const dependencies = await projectDependencies(root);
  const server = ['graphql-yoga', '@apollo/server', 'apollo-server', 'apollo-server-express', 'mercurius', 'express-graphql', 'graphql-http'].find((name) => dependencies.has(name));
  const requestProperty = server === '@apollo/server' ? await apolloRequestProperty(root) : undefined;
  return { header, ...(server ? { server } : {}), ...(requestProperty ? { requestProperty } : {}) };
}

/**
 * For a project on routing-controllers: the key header, and whether a currentUserChecker is configured (as an option
 * of createExpressServer / useExpressServer / createKoaServer / useKoaServer, or an options object they are given:
 * read as any source file naming both a server call and a `currentUserChecker` property).
 */
async function routingControllersOf(root: string, header: string): Promise<TransformContext['routingControllers']> {
  const dependencies = await projectDependencies(root);
  if (!dependencies.has('routing-controllers')) return undefined;
  const texts = await projectTexts(root);
  const server = texts.some((text) => /\b(create|use)(Express|Koa)Server\s*\(/.test(text));
  const checker = texts.some((text) => /\bcurrentUserChecker\s*[:(,}]/.test(text) || /\bcurrentUserChecker\s*=/.test(text));
  return { header, currentUserChecker: server && checker };
}

/** The recorded findings about a provider call's key, which a step of the thread pass at the same call says again, more exactly. */
const KEY_FINDINGS = ['provider-call-without-key', 'per-attempt-provider-key'];

/** `manual` without the key findings the thread pass's own step names at the same place (`file:line`): one step a place. */
function withoutRestated(manual: readonly ManualStep[], specificAt: ReadonlySet<string>): ManualStep[] {
  return manual.filter((step) => !(KEY_FINDINGS.some((rule) => step.reason.startsWith(`${rule}: `)) && specificAt.has(`${step.file ?? ''}:${step.line ?? 0}`)));
}

export const relativeTo = (root: string, file: string) => path.relative(root, file).split(path.sep).join('/');
