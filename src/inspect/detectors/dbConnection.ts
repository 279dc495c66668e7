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
export const CONNECTION_MENTIONS = /new\s+(?:\w+\.)?(?:Pool|Client|DataSource)\s*\(|\bcreate(?:Pool|Connection)\s*\(|\bknex\s*\(|connectionString|dbCredentials|TypeOrmModule|\bclient\s*:\s*['"](?:pg|postgres|postgresql|mysql2?)['"]/;

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
 * The environment variable an expression reads: `process.env.X`, `process.env['X']`, `env.X`, `config.X`,
 * `<anything>.config.X`, `configService.get('X')` / `getOrThrow('X')`, through `Number(…)`, `+…`, `… ?? default`,
 * `… || default`, `!` and `as`. Only names that match ENV_NAME.
 */
export function envNameOf(expression: ts.Expression): string | undefined {
  let node = unwrap(expression);
  for (;;) {
    if (ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken)) node = unwrap(node.left);
    else if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.PlusToken) node = unwrap(node.operand);
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && CONVERSIONS.has(node.expression.text) && node.arguments[0]) node = unwrap(node.arguments[0]);
    else break;
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

/** The connection settings of an options object (`{ host, port, user, password, database }` or `{ url }`). */
function settingsOf(value: ts.Expression | undefined): Omit<RawConnection, 'store' | 'line'> | undefined {
  if (!value) return undefined;
  const node = unwrap(value);
  const url = envNameOf(node);
  if (url) return { url };
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  const out: Omit<RawConnection, 'store' | 'line'> = {};
  for (const prop of node.properties) {
    if (!ts.isPropertyAssignment(prop)) continue;
    const key = propertyName(prop.name);
    const name = envNameOf(prop.initializer);
    if (key === undefined || name === undefined) continue;
    if (URL_KEYS.has(key)) out.url ??= name;
    else if (Object.hasOwn(PART_KEYS, key)) out[PART_KEYS[key]!] ??= name;
  }
  if (out.url !== undefined) return { url: out.url };
  return out.host !== undefined ? out : undefined;
}

const literal = (value: ts.Expression | undefined) => {
  const node = value && unwrap(value);
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
};
const named = (value: ts.Expression | undefined) => {
  const text = literal(value);
  return text !== undefined && Object.hasOwn(NAMED_STORES, text) ? NAMED_STORES[text] : undefined;
};
const property = (obj: ts.ObjectLiteralExpression, name: string) => {
  for (const prop of obj.properties) if (ts.isPropertyAssignment(prop) && propertyName(prop.name) === name) return prop.initializer;
  return undefined;
};

/**
 * Where a file creates its database client, and from which environment variables: the object shapes that name their
 * database (knex `{ client, connection }`, TypeORM / Sequelize `{ type | dialect, … }`, drizzle-kit `{ dialect,
 * dbCredentials }`, pg's `{ connectionString }`), then the client calls of pg, postgres.js, mysql2 and mariadb with a
 * URL or an options object. The database kind comes from what the code names or imports, else the package's one
 * relational database.
 */
export function scanConnections(sf: ts.SourceFile, ctx: ScanContext): RawConnection[] {
  const found: RawConnection[] = [];
  const used = new Set<ts.Node>();
  const relational = ctx.databases.filter((d): d is ConnectionStore => d === 'postgres' || d === 'mysql');
  const fallback = relational.length === 1 ? relational[0] : undefined;
  const add = (store: ConnectionStore | undefined, settings: ReturnType<typeof settingsOf>, at: ts.Node) => {
    if (store && settings) found.push({ store, ...settings, line: ctx.line(at) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && !used.has(node)) {
      const client = property(node, 'client');
      const connection = property(node, 'connection');
      const credentials = property(node, 'dbCredentials');
      if (client && connection) {
        used.add(unwrap(connection));
        add(named(client), settingsOf(connection), node);
      } else if (credentials) {
        used.add(unwrap(credentials));
        add(named(property(node, 'dialect')) ?? named(property(node, 'driver')), settingsOf(credentials), node);
      } else if (named(property(node, 'type')) ?? named(property(node, 'dialect'))) {
        used.add(node);
        add(named(property(node, 'type')) ?? named(property(node, 'dialect')), settingsOf(node), node);
      } else if (property(node, 'connectionString')) {
        used.add(node);
        add('postgres', settingsOf(node), node);
      }
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && CLIENT_CALLS.has(calleeName(node) ?? '')) {
      const arg = node.arguments?.[0];
      const unwrapped = arg && unwrap(arg);
      if (unwrapped && !used.has(unwrapped)) {
        const module = ctx.originOf(node.expression)?.module;
        const store = module !== undefined && Object.hasOwn(MODULE_STORES, module) ? MODULE_STORES[module] : module === undefined ? fallback : undefined;
        const settings = settingsOf(unwrapped);
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
