import path from 'node:path';
import { ts } from 'ts-morph';
import type { ImportBinding } from '../parse/indexSource.js';
import { accessChain, calleeName, propertyName, unwrap } from '../parse/astHelpers.js';
import type { ConnectionStore, StoreConnection } from '../types.js';
import type { Detector } from './detectorTypes.js';

/** What a file says about how it connects; `file` is filled in by the caller that knows the path. */
export type RawConnection = Omit<StoreConnection, 'file'>;

/** A name that can stand in generated code as `process.env['NAME']`: nothing else from the code ever gets there. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `config.X` / `env.X` are read as environment variables only when spelt like one (`fastify.config.MYSQL_HOST`). */
const ENV_SPELLING = /^[A-Z][A-Z0-9_]*$/;

/**
 * Files that may create a database client: the text test before a file is parsed for it. Kept narrow (every file it
 * matches is parsed) and case-sensitive in intent: the registry joins it case-insensitively with the others.
 */
export const CONNECTION_MENTIONS = /new\s+(?:\w+\.)?(?:Pool|Client|DataSource|Sequelize)\s*\(|\bcreate(?:Pool|Connection)\s*\(|\bknex\s*\(|connectionString|dbCredentials|TypeOrmModule|use_env_variable|\b(?:client|dialect)\s*:\s*['"](?:pg|postgres|postgresql|mysql2?|mariadb)['"]/;

const MODULE_STORES: Record<string, ConnectionStore> = {
  pg: 'postgres', postgres: 'postgres', '@neondatabase/serverless': 'postgres', '@vercel/postgres': 'postgres', 'pg-pool': 'postgres',
  mysql2: 'mysql', 'mysql2/promise': 'mysql', mysql: 'mysql', mariadb: 'mysql',
};
/** knex `client`, TypeORM `type`, drizzle `dialect` / `driver`, Sequelize `dialect`. */
const NAMED_STORES: Record<string, ConnectionStore> = {
  pg: 'postgres', postgres: 'postgres', postgresql: 'postgres', cockroachdb: 'postgres', 'aurora-postgres': 'postgres',
  mysql: 'mysql', mysql2: 'mysql', mariadb: 'mysql', 'aurora-mysql': 'mysql',
};
/** Calls and constructors that take a connection (a URL or an options object) as their first argument. */
const CLIENT_CALLS = new Set(['Pool', 'Client', 'createPool', 'createConnection', 'postgres', 'DataSource']);
const URL_KEYS = new Set(['url', 'uri', 'connectionString', 'connectionUri']);
const PART_KEYS: Record<string, 'host' | 'port' | 'user' | 'password' | 'database'> = {
  host: 'host', hostname: 'host', port: 'port', user: 'user', username: 'user', password: 'password', database: 'database',
};
const CONVERSIONS = new Set(['Number', 'parseInt', 'parseFloat', 'String']);

export interface ScanContext {
  line(node: ts.Node): number;
  originOf(expr: ts.Expression): ImportBinding | undefined;
  /** The package's relational databases: the kind of a client the code does not name (one of them only). */
  databases: readonly string[];
}

/**
 * What a name in the file stands for, when it is bound once in it: `const host = process.env.DB_HOST` (the
 * initializer), or `const { DB_HOST: host } = process.env` (the variable). `null` for a name bound more than once or
 * also a parameter somewhere in the file: its value at the use is not known.
 */
type Binding = { env: string } | { init: ts.Expression } | null;
export type Bindings = ReadonlyMap<string, Binding>;

/** How many identifiers one read may follow (`const url = base; const base = …`). */
const MAX_HOPS = 4;

/** The names bound once in a file: constants, and destructurings of `process.env` / `env` / `config`. */
export function bindingsOf(sf: ts.SourceFile): Bindings {
  const out = new Map<string, Binding>();
  const bind = (name: string, value: Binding) => out.set(name, out.has(name) ? null : value);
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node)) {
      if (ts.isIdentifier(node.name)) bind(node.name.text, node.initializer ? { init: node.initializer } : null);
      else if (ts.isObjectBindingPattern(node.name)) {
        const chain = node.initializer ? accessChain(unwrap(node.initializer)) : [];
        // As envNameOf reads them: any name of process.env, `env.X` / `config.X` only when spelt like a variable.
        const processEnv = chain.length === 2 && chain[0] === 'process' && chain[1] === 'env';
        const envLike = chain.length === 1 && (chain[0] === 'env' || chain[0] === 'config');
        for (const element of node.name.elements) {
          if (!ts.isIdentifier(element.name)) continue;
          const key = element.propertyName ? propertyName(element.propertyName) : element.name.text;
          const read = !element.dotDotDotToken && key !== undefined && ((processEnv && ENV_NAME.test(key)) || (envLike && ENV_SPELLING.test(key)));
          bind(element.name.text, read ? { env: key } : null);
        }
      }
    } else if (ts.isParameter(node) && ts.isIdentifier(node.name)) out.set(node.name.text, null);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const NO_BINDINGS: Bindings = new Map();

/** The expression a name bound once in the file stands for (through at most MAX_HOPS names), else the expression. */
function deref(expression: ts.Expression, bindings: Bindings): ts.Expression {
  let node = unwrap(expression);
  for (let hop = 0; hop < MAX_HOPS && ts.isIdentifier(node); hop += 1) {
    const binding = bindings.get(node.text);
    if (!binding || !('init' in binding)) break;
    node = unwrap(binding.init);
  }
  return node;
}

/**
 * The environment variable an expression reads: `process.env.X`, `process.env['X']`, `env.X`, `config.X`,
 * `<anything>.config.X`, `configService.get('X')` / `getOrThrow('X')`, through `Number(…)`, `+…`, `… ?? default`,
 * `… || default`, `!` and `as`, and through names bound once in the file (`bindings`). Only names that match ENV_NAME.
 */
export function envNameOf(expression: ts.Expression, bindings: Bindings = NO_BINDINGS): string | undefined {
  let node = unwrap(expression);
  for (let hops = 0; ; ) {
    if (ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken)) node = unwrap(node.left);
    else if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.PlusToken) node = unwrap(node.operand);
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && CONVERSIONS.has(node.expression.text) && node.arguments[0]) node = unwrap(node.arguments[0]);
    else if (ts.isIdentifier(node) && hops < MAX_HOPS && bindings.get(node.text)) {
      const binding = bindings.get(node.text)!;
      if ('env' in binding) return binding.env;
      node = unwrap(binding.init);
      hops += 1;
    } else break;
  }
  let name: string | undefined;
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ['get', 'getOrThrow'].includes(node.expression.name.text)) {
    const receiver = accessChain(node.expression.expression);
    const arg = node.arguments[0];
    if (/config/i.test(receiver[receiver.length - 1] ?? '') && arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) name = arg.text;
  } else if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
    const chain = accessChain(node);
    const last = chain[chain.length - 1];
    const owner = chain[chain.length - 2];
    if (chain.length === 3 && chain[0] === 'process' && owner === 'env') name = last;
    else if ((owner === 'env' || owner === 'config') && last !== undefined && ENV_SPELLING.test(last)) name = last;
  }
  return name !== undefined && ENV_NAME.test(name) ? name : undefined;
}

type Settings = Omit<RawConnection, 'store' | 'line'>;
type Part = 'host' | 'port' | 'user' | 'password' | 'database';

/** Placeholders for a template's `${…}` while its text is read as a URL: characters no URL part contains. */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const URL_SHAPE = new RegExp(`^([A-Za-z][A-Za-z0-9+.-]*)://(?:([^:@/]*)(?::([^@/]*))?@)?([^:/?#]*)(?::([^/?#]*))?(?:/([^?#]*))?(?:[?#].*)?$`, 's');
const URL_ESCAPES = new Set(['encodeURIComponent', 'encodeURI', 'escape']);
const PLACEHOLDER = new RegExp(`^${OPEN}(\\d+)${CLOSE}$`);

/**
 * A connection URL built in a template string: `${…}` in the user, password, host, port or database position map to
 * that part's environment variable (each one a whole part, read by envNameOf); a literal part is left to the pool's
 * default, and the host must be a variable (a literal host is no setting the pool can share). A template that is one
 * variable plus a query (`${process.env.DATABASE_URL}?sslmode=require`) is that URL variable. The database kind
 * comes from the scheme, which must name a relational database.
 */
function templateUrl(node: ts.TemplateExpression, bindings: Bindings): { store?: ConnectionStore; settings?: Settings } {
  const spans = node.templateSpans;
  const text = node.head.text + spans.map((span, index) => `${OPEN}${index}${CLOSE}${span.literal.text}`).join('');
  const whole = new RegExp(`^${OPEN}0${CLOSE}(?:[?#].*)?$`, 's').exec(text);
  if (whole && spans[0]) {
    const url = envNameOf(spans[0].expression, bindings);
    return url ? { settings: { url } } : {};
  }
  const match = URL_SHAPE.exec(text);
  if (!match) return {};
  const scheme = match[1]!.toLowerCase();
  // A scheme of another kind of server (redis://, mongodb://) is no relational database's URL.
  if (!Object.hasOwn(NAMED_STORES, scheme)) return {};
  const store = NAMED_STORES[scheme]!;
  const part = (value: string | undefined) => {
    const index = value === undefined ? undefined : PLACEHOLDER.exec(value)?.[1];
    const span = index === undefined ? undefined : spans[Number(index)];
    if (!span) return undefined;
    // A part escaped for the URL (`encodeURIComponent(process.env.PGPASSWORD)`) is the variable's own value.
    const read = unwrap(span.expression);
    const escaped = ts.isCallExpression(read) && ts.isIdentifier(read.expression) && URL_ESCAPES.has(read.expression.text) && read.arguments[0];
    return envNameOf(escaped || read, bindings);
  };
  const settings: Settings = {};
  const positions: Array<[Part, string | undefined]> = [['host', match[4]], ['port', match[5]], ['user', match[2]], ['password', match[3]], ['database', match[6]]];
  for (const [key, value] of positions) {
    const name = part(value);
    if (name !== undefined) settings[key] = name;
  }
  return settings.host !== undefined ? { store, settings } : { store };
}

/** The database kind a URL template names in its scheme (`postgres://${…}`), for a client whose module does not say. */
function schemeStore(value: ts.Expression | undefined, bindings: Bindings): ConnectionStore | undefined {
  return readSettings(value, bindings).scheme;
}

/** The key and value of an object literal's `key: value` or shorthand `key`. */
function entryOf(prop: ts.ObjectLiteralElementLike): [string | undefined, ts.Expression] | undefined {
  if (ts.isPropertyAssignment(prop)) return [propertyName(prop.name), prop.initializer];
  if (ts.isShorthandPropertyAssignment(prop)) return [prop.name.text, prop.name];
  return undefined;
}

/**
 * The connection settings of an options object (`{ host, port, user, password, database }`, `{ url }` or a URL
 * template in it, sequelize-cli's `{ use_env_variable: 'X' }`), of a URL variable, or of a URL template, with the
 * kind a template's scheme names. Parts need their host from a variable (`allowNoHost`: or no host key at all, where
 * the client's default is localhost).
 */
function readSettings(value: ts.Expression | undefined, bindings: Bindings, allowNoHost = false): { settings?: Settings; scheme?: ConnectionStore } {
  if (!value) return {};
  const node = deref(value, bindings);
  const url = envNameOf(node, bindings);
  if (url) return { settings: { url } };
  if (ts.isTemplateExpression(node)) {
    const { store, settings } = templateUrl(node, bindings);
    return { ...(settings ? { settings } : {}), ...(store ? { scheme: store } : {}) };
  }
  if (!ts.isObjectLiteralExpression(node)) return {};
  const out: Settings = {};
  let fromTemplate: ReturnType<typeof templateUrl> | undefined;
  let literalHost = false;
  for (const prop of node.properties) {
    const entry = entryOf(prop);
    if (!entry || entry[0] === undefined) continue;
    const [key, initializer] = entry;
    const name = envNameOf(initializer, bindings);
    if (key === 'use_env_variable') {
      const text = literal(deref(initializer, bindings));
      if (text !== undefined && ENV_NAME.test(text)) out.url ??= text;
    } else if (URL_KEYS.has(key)) {
      if (name !== undefined) out.url ??= name;
      else {
        const template = deref(initializer, bindings);
        if (ts.isTemplateExpression(template)) fromTemplate ??= templateUrl(template, bindings);
      }
    } else if (Object.hasOwn(PART_KEYS, key)) {
      if (name !== undefined) out[PART_KEYS[key]!] ??= name;
      else if (PART_KEYS[key] === 'host') literalHost = true;
    }
  }
  const scheme = fromTemplate?.store ? { scheme: fromTemplate.store } : {};
  if (out.url !== undefined) return { settings: { url: out.url }, ...scheme };
  if (fromTemplate?.settings) return { settings: fromTemplate.settings, ...scheme };
  if (out.host !== undefined) return { settings: out, ...scheme };
  return allowNoHost && !literalHost && Object.keys(out).length > 0 ? { settings: out, ...scheme } : scheme;
}

const settingsOf = (value: ts.Expression | undefined, bindings: Bindings, allowNoHost = false) => readSettings(value, bindings, allowNoHost).settings;

const literal = (value: ts.Expression | undefined) => {
  const node = value && unwrap(value);
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
};
const named = (value: ts.Expression | undefined, bindings: Bindings = NO_BINDINGS) => {
  const text = literal(value && deref(value, bindings));
  return text !== undefined && Object.hasOwn(NAMED_STORES, text) ? NAMED_STORES[text] : undefined;
};
const property = (obj: ts.ObjectLiteralExpression, name: string) => {
  for (const prop of obj.properties) if (ts.isPropertyAssignment(prop) && propertyName(prop.name) === name) return prop.initializer;
  return undefined;
};

/**
 * Sequelize's constructor in its three forms: `new Sequelize(url, options?)`, `new Sequelize(database, username,
 * password, options)` and `new Sequelize(options)`. The kind is the options' `dialect`, else the URL template's
 * scheme, else the package's one relational database (a URL variable does not say).
 */
function sequelizeSettings(node: ts.NewExpression, bindings: Bindings, fallback: ConnectionStore | undefined): { store?: ConnectionStore; settings?: Settings; objects: ts.Node[] } {
  const args = (node.arguments ?? []).map((arg) => deref(arg, bindings));
  const objects = args.filter(ts.isObjectLiteralExpression);
  const options = args.length > 1 ? objects.find((o) => o === args[args.length - 1]) : objects[0];
  const store = (options && named(property(options, 'dialect') ?? objectShorthand(options, 'dialect'), bindings)) ?? schemeStore(args[0], bindings) ?? fallback;
  const first = args[0];
  if (!first) return { objects };
  if (ts.isObjectLiteralExpression(first)) return { store, settings: settingsOf(first, bindings, true), objects };
  if (args.length >= 3) {
    // A host the options give as no variable: the pool could not follow it to the same server.
    if (options && hasLiteralHost(options, bindings)) return { objects };
    const fromOptions = options ? settingsOf(options, bindings, true) : undefined;
    const settings: Settings = {};
    const positions: Array<[Part, ts.Expression | undefined]> = [['database', args[0]], ['user', args[1]], ['password', args[2]]];
    for (const [key, arg] of positions) {
      const name = arg && envNameOf(arg, bindings);
      if (name !== undefined) settings[key] = name;
    }
    if (fromOptions?.host !== undefined) settings.host = fromOptions.host;
    if (fromOptions?.port !== undefined) settings.port = fromOptions.port;
    return Object.keys(settings).length > 0 ? { store, settings, objects } : { objects };
  }
  return { store, settings: settingsOf(first, bindings), objects };
}

function objectShorthand(obj: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const prop of obj.properties) if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === name) return prop.name;
  return undefined;
}

/** An options object whose `host` is there but no variable: the settings cannot follow it. */
function hasLiteralHost(obj: ts.ObjectLiteralExpression, bindings: Bindings): boolean {
  for (const prop of obj.properties) {
    const entry = entryOf(prop);
    if (entry && entry[0] !== undefined && Object.hasOwn(PART_KEYS, entry[0]) && PART_KEYS[entry[0]] === 'host' && envNameOf(entry[1], bindings) === undefined) return true;
  }
  return false;
}

/**
 * Where a file creates its database client, and from which environment variables: Sequelize's constructor, the object
 * shapes that name their database (knex `{ client, connection }`, TypeORM / Sequelize `{ type | dialect, … }`,
 * drizzle-kit `{ dialect, dbCredentials }`, pg's `{ connectionString }`), then the client calls of pg, postgres.js,
 * mysql2 and mariadb with a URL (a variable, or a template of variables) or an options object. Names bound once in
 * the file are followed (`{ host }` where `const host = process.env.DB_HOST`). The database kind comes from what the
 * code names or imports, else the package's one relational database.
 */
export function scanConnections(sf: ts.SourceFile, ctx: ScanContext): RawConnection[] {
  const found: RawConnection[] = [];
  const used = new Set<ts.Node>();
  const bindings = bindingsOf(sf);
  const relational = ctx.databases.filter((d): d is ConnectionStore => d === 'postgres' || d === 'mysql');
  const fallback = relational.length === 1 ? relational[0] : undefined;
  const add = (store: ConnectionStore | undefined, settings: Settings | undefined, at: ts.Node) => {
    if (store && settings) found.push({ store, ...settings, line: ctx.line(at) });
  };
  // Sequelize first: its options object names a dialect, and read alone it would lose the constructor's arguments.
  const sequelize = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && calleeName(node) === 'Sequelize') {
      const { store, settings, objects } = sequelizeSettings(node, bindings, fallback);
      for (const object of objects) used.add(object);
      add(store, settings, node);
    }
    ts.forEachChild(node, sequelize);
  };
  sequelize(sf);
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && !used.has(node)) {
      const client = property(node, 'client');
      const connection = property(node, 'connection');
      const credentials = property(node, 'dbCredentials');
      if (client && connection) {
        used.add(deref(connection, bindings));
        const { settings, scheme } = readSettings(connection, bindings);
        add(named(client, bindings) ?? scheme, settings, node);
      } else if (credentials) {
        used.add(deref(credentials, bindings));
        const { settings, scheme } = readSettings(credentials, bindings);
        add(named(property(node, 'dialect')) ?? named(property(node, 'driver')) ?? scheme, settings, node);
      } else if (named(property(node, 'type')) ?? named(property(node, 'dialect'))) {
        used.add(node);
        add(named(property(node, 'type')) ?? named(property(node, 'dialect')), settingsOf(node, bindings), node);
      } else if (property(node, 'connectionString')) {
        used.add(node);
        const { settings, scheme } = readSettings(node, bindings);
        add(scheme ?? 'postgres', settings, node);
      }
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && CLIENT_CALLS.has(calleeName(node) ?? '')) {
      const arg = node.arguments?.[0];
      const unwrapped = arg && deref(arg, bindings);
      if (unwrapped && !used.has(unwrapped)) {
        const module = ctx.originOf(node.expression)?.module;
        const { settings, scheme } = readSettings(unwrapped, bindings);
        const store = module !== undefined && Object.hasOwn(MODULE_STORES, module) ? MODULE_STORES[module] : module === undefined ? (scheme ?? fallback) : undefined;
        if (store && settings) {
          used.add(unwrapped);
          add(store, settings, node);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** Prisma's `datasource db { provider = "postgresql" url = env("X") }`, from a schema.prisma's text. */
export function prismaConnection(text: string): RawConnection | undefined {
  const block = /datasource\s+\w+\s*\{([^}]*)\}/.exec(text);
  if (!block) return undefined;
  const body = block[1]!;
  const provider = /provider\s*=\s*"(\w+)"/.exec(body)?.[1];
  const url = /\burl\s*=\s*env\(\s*"([^"]*)"\s*\)/.exec(body);
  const store = provider !== undefined && Object.hasOwn(NAMED_STORES, provider) ? NAMED_STORES[provider] : undefined;
  if (!store || !url || !ENV_NAME.test(url[1]!)) return undefined;
  const at = block.index + block[0].indexOf(url[0]);
  return { store, url: url[1]!, line: text.slice(0, at).split('\n').length };
}

/** Where sequelize-cli keeps its settings by default, relative to the package (`.sequelizerc` can move it). */
export const SEQUELIZE_CONFIG = 'config/config.json';

/**
 * Where a `.sequelizerc` moves sequelize-cli's config: its `config` entry as a string or `path.resolve(…)` /
 * `path.join(…)` of string literals (after an optional `__dirname` / `process.cwd()`), relative to the package, POSIX
 * slashes. Undefined when it says nothing readable or points outside the package.
 */
export function sequelizercConfigPath(text: string): string | undefined {
  const entry = /(?:^|[{,\s])['"]?config['"]?\s*:\s*(?:path\.(?:resolve|join)\(([^)]*)\)|(['"][^'"\n]*['"]))/.exec(text);
  if (!entry) return undefined;
  const args = entry[1] !== undefined ? entry[1].replace(/^\s*(?:__dirname|process\.cwd\(\))\s*,/, '') : entry[2]!;
  const parts = args.split(',').map((part) => part.trim());
  if (parts.length === 0 || !parts.every((part) => /^(['"])[\w./@-]+\1$/.test(part))) return undefined;
  const joined = path.posix.normalize(parts.map((part) => part.slice(1, -1)).join('/'));
  return joined.startsWith('..') || path.posix.isAbsolute(joined) || joined === '.' ? undefined : joined;
}

/**
 * sequelize-cli's `config/config.json`: `{ "<environment>": { "use_env_variable": "X", "dialect": "postgres", … } }`.
 * Only `use_env_variable` names a variable; its literal username / host / database are no settings the pool could
 * share, so an environment without it says nothing. The kind is the entry's dialect, else the package's one
 * relational database.
 */
export function sequelizeConfigConnections(text: string, databases: readonly string[]): RawConnection[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  const relational = databases.filter((d): d is ConnectionStore => d === 'postgres' || d === 'mysql');
  const fallback = relational.length === 1 ? relational[0] : undefined;
  const found: RawConnection[] = [];
  // The line of each "use_env_variable" key in the text, in order: JSON.parse keeps the entries in the same order.
  const lines = [...text.matchAll(/"use_env_variable"\s*:/g)].map((m) => text.slice(0, m.index).split('\n').length);
  let seen = 0;
  for (const entry of Object.values(parsed as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { use_env_variable: url, dialect } = entry as { use_env_variable?: unknown; dialect?: unknown };
    if (url === undefined) continue;
    const line = lines[seen] ?? 1;
    seen += 1;
    const store = typeof dialect === 'string' && Object.hasOwn(NAMED_STORES, dialect) ? NAMED_STORES[dialect] : dialect === undefined ? fallback : undefined;
    if (store && typeof url === 'string' && ENV_NAME.test(url)) found.push({ store, url, line });
  }
  return found;
}

/** A file's connection with its path, `file` before `line` as in findings. */
export function located(raw: RawConnection, file: string): StoreConnection {
  const { line, ...settings } = raw;
  return { ...settings, file, line };
}

export const dbConnection: Detector = {
  name: 'db-connection',
  mentions: CONNECTION_MENTIONS,
  detect(ctx, facts) {
    for (const raw of scanConnections(ctx.sf, { line: ctx.line, originOf: ctx.originOf, databases: ctx.pkg.stack.databases })) facts.connections.push(located(raw, ctx.rel));
  },
};
