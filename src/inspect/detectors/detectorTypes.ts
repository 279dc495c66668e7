import type { ts } from 'ts-morph';
import type { ImportBinding, SourceIndex } from '../parse/indexSource.js';
import type { PackageStack } from '../stack/detectStack.js';
import type { ConsumerFinding, Finding, HttpMethod, StoreConnection } from '../types.js';

/** Everything a detector may look at for one file. Internal: never leaves src/inspect. */
export interface FileContext {
  rel: string;
  text: string;
  sf: ts.SourceFile;
  index: SourceIndex;
  /** The workspace package (or the root project) the file belongs to. */
  pkg: { dir: string; name?: string; stack: PackageStack };
  line(node: ts.Node): number;
  /** Which module an identifier, `ns.member` or `require('x')` comes from. */
  originOf(expr: ts.Expression): ImportBinding | undefined;
}

/**
 * A reference to something that can own routes: a binding in a file (resolved through imports later),
 * `ns.member` of a namespace import, or a module's default export.
 */
export interface OwnerRef {
  file: string;
  name?: string;
  member?: string;
  module?: string;
}

export interface RawRoute {
  file: string;
  line: number;
  method: HttpMethod;
  /** Path as written at the registration, before mount prefixes. */
  path: string;
  /** undefined when the path is already absolute (NestJS, Next.js). */
  owner?: OwnerRef;
  framework?: string;
  handler?: string;
  /** An inline handler's one service method (routeHandlers delegateOf). */
  delegate?: string;
  /** Keys into the function index (functionKeyOf) for reachability and body fields. */
  handlerKeys: string[];
  bodyFields: string[];
  bodyShapes: string[];
  /** NestJS parts, composed with the package's global prefix and versioning later. */
  nest?: {
    controller: string;
    method: string;
    versions: string[] | undefined;
    /** The controller is declared through the project's own class decorator (see NestControllerFactory). */
    via?: { decorator: string; args: Array<string | undefined> };
  };
  prefixResolved?: boolean;
  /**
   * Express, Koa, Fastify, Hono: the middleware that runs before the handler in this file (its own arguments or
   * hooks, a `.route(path).all(…)` chain, use() / addHook() on its router before it), read by routeGuards.ts.
   */
  guards?: GuardRef[];
  /** Not a declared HTTP route: a Next.js Server Action, a tRPC procedure or a GraphQL mutation. */
  transport?: 'server-action' | 'trpc' | 'graphql';
}

export interface OwnerInfo {
  framework: string;
  /** Created as an application (express(), Fastify(), new Koa()), so it needs no mount to be reachable. */
  root: boolean;
  /** Own prefix (koa-router `prefix`, Hono `basePath`). */
  prefix?: string;
}

export interface RawMount {
  parent: OwnerRef;
  child: OwnerRef;
  /** null when the prefix is computed at runtime. */
  prefix: string | null;
  /** @fastify/autoload: every plugin file under this directory (relative to the root) is mounted. */
  autoloadDir?: string;
  /** A loop over a directory's entries mounting each module it loads (`for (const f of readdirSync(dir)) app.use(…, require(…))`). */
  dirLoad?: DirLoad;
  /** The middleware the parent runs before the child: beside it in the mount call, use() / addHook() before it. */
  guards?: GuardRef[];
}

/**
 * One middleware before a handler: `verdict` when this file alone tells whether it authenticates (its package, an
 * inline body); otherwise `key` (a function key) / `ref` (a binding that may be a router) / `name` are resolved once
 * files are linked, the name last.
 */
export interface GuardRef {
  text: string;
  verdict?: 'auth' | 'other';
  key?: string;
  ref?: string;
  name?: string;
}

/** One step applied to a directory entry's name: `f.replace(/\.js$/, '')`, `path.basename(f, '.js')`, `path.parse(f).name`, … */
export type FileNameOp =
  | { replace: string; flags: string; with: string }
  | { basename: string }
  | { stem: true }
  | { extname: true }
  | { split: string; index: number }
  | { slice: [number, number?] }
  | { lower: true };

/** A test of an entry's name (after `name`'s steps) that the loop applies: `f !== 'index.js'`, `f.endsWith('.js')`, `/\.ts$/.test(f)`. */
export interface FileNameTest {
  name: FileNameOp[];
  is: 'equals' | 'endsWith' | 'startsWith' | 'includes' | 'matches';
  value: string;
  /** Regular-expression flags, for `matches`. */
  flags?: string;
  negate?: true;
}

/** A mount path part: literal text, or the entry's name through these steps. */
export type FileNamePart = string | FileNameOp[];

export interface DirLoad {
  /** The directory read, relative to the root; only its own entries are loaded (readdir does not recurse). */
  dir: string;
  /** Every clause holds for a loaded entry, a clause when one of its tests does (the loop's filter and guards). */
  accept: FileNameTest[][];
  /** The mount path from the entry's name, or null when the loop does not say (`mod.prefix`). */
  prefix: FileNamePart[] | null;
  /** The module specifier from the entry's name, relative to the loader (`./routes/${file}`, `./modules/${dir}/router`); null: the entry itself. */
  module: FileNamePart[] | null;
  /** The export mounted (`(await import(f)).default`, `require(f).router`); default / module.exports otherwise. */
  member?: string;
}

export interface NestBootstrap {
  file: string;
  /** undefined: no setGlobalPrefix; null: set from a runtime value. */
  globalPrefix?: string | null;
  uriVersioning?: { prefix: string; defaultVersion?: string[] };
}

export interface RawWebhook {
  file: string;
  line: number;
  provider?: string;
  verifiesSignature: boolean;
  dedupesEventId: boolean;
  /** Function keys enclosing the verification, innermost first, to link it to the route that calls it. */
  enclosingKeys: string[];
  span: [number, number];
  /**
   * The enclosing function returns the verified event (`return stripe.webhooks.constructEvent(…)`): it verifies for a
   * caller, which is where the event is handled. Its name, to tell whether anything in the project calls it.
   */
  verifierName?: string;
}

/**
 * A project's own class decorator that applies Nest's `@Controller` (`applyDecorators(Controller({ path }))`): the
 * controller path as a template over the decorator's parameters, local constants already filled in. null: a path
 * that cannot be read statically.
 */
export type NestPathPart = { text: string } | { param: number } | { ref: string };
export interface NestControllerFactory {
  parts: NestPathPart[] | null;
}

export interface FileFacts {
  findings: Finding[];
  routes: RawRoute[];
  mounts: RawMount[];
  owners: Map<string, OwnerInfo>;
  nestBootstraps: NestBootstrap[];
  /** routing-controllers' `routePrefix` where this file starts its server; null: computed at runtime. */
  routePrefixes: Array<{ file: string; prefix: string | null }>;
  webhooks: RawWebhook[];
  /** Function keys (this file) that contain a payment call: the seeds of `touchesPayment` reachability. */
  paymentFunctionKeys: string[];
  /** The subset whose call moves money or creates a billable object (not a session URL). */
  riskyPaymentFunctionKeys: string[];
  /** Function keys (this file) that insert a row or document: the seeds of `insertsRecord` reachability. */
  insertFunctionKeys: string[];
  /** Functions that publish to a broker (publishes.ts), with the broker: the seeds of an endpoint's `publishes`. */
  publishFunctions: Array<{ key: string; broker: string }>;
  /** Functions (this file) that send an e-mail, SMS or push notification, with the library: seeds of `sendsMessage`. */
  messageFunctions: Array<{ key: string; library: string }>;
  /** Messaging clients this file exports, by exported name ('default': `module.exports = transport`). */
  messageClients: Array<{ name: string; library: string }>;
  /** Sends on a receiver imported from a project module: seeds once that module exports a client of `library` as `name`. */
  importedMessageSends: Array<{ module: string; name: string; library: string; keys: string[] }>;
  /** Functions of this file (by local name) that apply `@Controller`: see NestControllerFactory. */
  nestControllerFactories: Map<string, NestControllerFactory>;
  /** Consumers registered inside a function that receives the handler: the project's own subscribe wrapper. */
  consumerWrappers: ConsumerWrapper[];
  /** Where this file creates a PostgreSQL / MySQL client, and the environment variables it reads (dbConnection.ts). */
  connections: StoreConnection[];
  /** @hono/zod-openapi route configs bound to a name in this file (`export const create = createRoute({ … })`). */
  openApiConfigs: Map<string, OpenApiConfig>;
  /** `router.openapi(routes.create, handler)` whose config is bound elsewhere: completed in buildEndpoints. */
  openApiRoutes: OpenApiRoute[];
  /** Functions (this file, innermost first) that render a server-side view by its literal name (`res.render('x')`). */
  viewRenders: Array<{ view: string; keys: string[] }>;
  /** Apps this file hands to a server (`serve({ fetch: app.fetch })` of @hono/node-server): roots, whatever built them. */
  servedApps: OwnerRef[];
}

/** The method and path (Hono's `:id` form) of a @hono/zod-openapi `createRoute` config. */
export interface OpenApiConfig {
  method: HttpMethod;
  path: string;
}

/** A route registered with a config from another binding: method and path are read from `config` once files are linked. */
export interface OpenApiRoute extends Omit<RawRoute, 'method' | 'path'> {
  config: OwnerRef;
}

/**
 * `KafkaService.subscribe(topic, groupId, handler)`: a function or method of this file that registers a consumer and
 * runs a handler it was given. Its callers across the project are the real consumers (resolve/consumerWrappers.ts).
 */
export interface ConsumerWrapper {
  /** The consumer found inside the wrapper, replaced by one finding per caller when callers are found. */
  finding: ConsumerFinding;
  /** The function's name, or the method's name when `className` is set. */
  name: string;
  className?: string;
  /**
   * The interfaces the class says it implements (`class RabbitMQAdapter implements Queue`): callers that hold the
   * adapter through its port (`constructor(queue: Queue)`) import the interface, never the class. `<default>` when the
   * file's default export is the class or one of those interfaces.
   */
  implementing?: string[];
  /** Which argument of a call to the wrapper is the handler, and which (if any) names the queue or topic. */
  handlerIndex: number;
  queueIndex?: number;
}

export interface Detector {
  name: string;
  /** Cheap text test: the detector runs only on files whose text matches, so most files are never walked twice. */
  mentions: RegExp;
  /** Cheap path test (relative to the project root): when set, only files whose path matches are looked at. */
  paths?: RegExp;
  detect(ctx: FileContext, facts: FileFacts): void;
}

export function emptyFacts(): FileFacts {
  return { findings: [], routes: [], mounts: [], owners: new Map(), nestBootstraps: [], routePrefixes: [], webhooks: [], paymentFunctionKeys: [], riskyPaymentFunctionKeys: [], insertFunctionKeys: [], publishFunctions: [], messageFunctions: [], messageClients: [], importedMessageSends: [], nestControllerFactories: new Map(), consumerWrappers: [], connections: [], openApiConfigs: new Map(), openApiRoutes: [], servedApps: [], viewRenders: [] };
}
