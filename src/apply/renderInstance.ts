import { ts } from 'ts-morph';
import type { StoreConnection } from '../inspect/types.js';
import { instancePoolExpression } from '../scaffold/stores/poolExpression.js';

/** The frameworks apply can wire, with how their principal is read in the app's instance module. */
export type WiredFramework = 'express' | 'fastify' | 'nestjs';

const PRINCIPAL: Record<WiredFramework, string> = {
  express: '(req) => (req as typeof req & AuthenticatedUser).user?.id',
  fastify: '(request) => (request as typeof request & AuthenticatedUser).user?.id',
  nestjs: '(request) => request.user?.id',
};

/**
 * How each store's instance opens its pool: `createPool` is what the scaffold's index.ts re-exports from the store's
 * pool.ts (pg, mysql2, better-sqlite3, ioredis, the DynamoDB document client), reading the variable the README and the
 * generated tests read (stores/poolExpression.ts, the one table of them), and the statement closeIdempotency() ends it
 * with. Static text per store id: nothing from the config reaches it.
 */
const STORE_POOLS: Record<string, { comment: string; pool: string; close: string }> = {
  postgres: {
    comment: 'With DATABASE_URL unset, pg falls back to its PGHOST/PGUSER/PGDATABASE environment variables.',
    pool: instancePoolExpression('postgres'),
    close: 'await pool.end();',
  },
  mysql: {
    comment: 'DATABASE_URL is the MySQL / MariaDB server the store migration ran on: mysql://user:password@host:3306/database.',
    pool: instancePoolExpression('mysql'),
    close: 'await pool.end();',
  },
  sqlite: {
    comment: 'DATABASE_URL is the SQLite database file the store migration ran on (a path or sqlite:path; a file, not :memory:).',
    pool: instancePoolExpression('sqlite'),
    close: 'pool.end();',
  },
  libsql: {
    comment: 'DATABASE_URL is the libSQL database the store migration ran on (libsql://… with DATABASE_AUTH_TOKEN, or file:path).',
    pool: instancePoolExpression('libsql'),
    close: 'pool.close();',
  },
  redis: {
    comment: 'REDIS_URL is the Redis server (or cluster entry point) the keys live on.',
    pool: instancePoolExpression('redis', '{ lazyConnect: inTests }'),
    // A lazy client that never connected (the memory store under tests) would connect just to say QUIT.
    close: "if (pool.status === 'wait') pool.disconnect();\n      else await pool.quit();",
  },
  dynamodb: {
    comment: "With DYNAMODB_ENDPOINT unset, the AWS SDK's own endpoint, region and credentials from the environment are used.",
    pool: instancePoolExpression('dynamodb'),
    close: 'pool.client.destroy();',
  },
};

/**
 * The import line of an instance module: `createMemoryStore` only from a scaffold index that exports it (one generated
 * before the memory store existed, or edited since, does not).
 */
export function instanceImport(memory: boolean): string {
  return `import { createIdempotency, ${memory ? 'createMemoryStore, ' : ''}createPool, POLICY } from './index.js';`;
}

/**
 * The `export const pool = …` lines of an instance module for the project's store (PostgreSQL when it has none of its
 * own), and closeIdempotency(), which ends that pool. With `memory`, first the switch that puts the app's own tests on
 * the memory store: Jest and Vitest set NODE_ENV=test, so a suite that calls a wired route passes without a store
 * server (its requests get a key from apply's test pass); IDEMPOTENCY_STORE=memory asks for it under other runners,
 * =database keeps the real store. With the project's own `connection` (PostgreSQL / MySQL), the pool reads the
 * variables its database client reads.
 * closeIdempotency() is for the process's own shutdown, never an app's close: the pool is this module's, shared by
 * every app the process builds (a test suite builds and closes one per test; ending the pool there answered every
 * later test 503), and an idle pool does not keep the process alive anyway (pg's allowExitOnIdle, mysql2's
 * connections unref'd while idle). It keeps the promise of its first call: a pool ended twice throws (pg) or never
 * settles. Written without `??=` (TypeScript 4.0): the instance is compiled by the project's TypeScript.
 */
export function instancePool(storeId: string | undefined, memory = true, connection?: StoreConnection): string {
  const id = storeId !== undefined && Object.hasOwn(STORE_POOLS, storeId) ? storeId : 'postgres';
  const store = { ...STORE_POOLS[id]!, ...projectConnection(id, connection) };
  const pool = memory ? store.pool : store.pool.replace(', { lazyConnect: inTests }', '');
  const tests = memory
    ? `// Under your test runner (NODE_ENV=test: Jest and Vitest set it), or with IDEMPOTENCY_STORE=memory, keys are kept
// in this process's memory, so the app's own tests need no store server; IDEMPOTENCY_STORE=database runs them on the
// real store. One process only, lost on restart: never in production.
const storeChoice = process.env['IDEMPOTENCY_STORE'];
const inTests = storeChoice === 'memory' || (process.env['NODE_ENV'] === 'test' && storeChoice !== 'database');
`
    : '';
  // DynamoDB's store reads the client and the table name off the pool as the app instance is built: opened there.
  if (id === 'dynamodb')
    return `${tests}// ${store.comment}
// Exported for health checks; your process's shutdown may end it with closeIdempotency() (below).
export const pool = ${pool};

${closeFunction(store.close)}`;
  return `${tests}// ${store.comment}
// Opened on first use, not when this module is imported: your routes import it before the app has loaded its
// environment (a .env read by a config module or plugin at start-up), so the settings may not be in process.env yet.
let opened: ReturnType<typeof createPool> | undefined;
function openPool(): ReturnType<typeof createPool> {
  if (opened === undefined) opened = ${pool};
  return opened;
}

// Exported for health checks (a use opens it); your process's shutdown may end it with closeIdempotency() (below).
export const pool = new Proxy({} as ReturnType<typeof createPool>, {
  get: (_, property) => {
    const value: unknown = Reflect.get(openPool(), property);
    return typeof value === 'function' ? value.bind(openPool()) : value;
  },
  getPrototypeOf: () => Reflect.getPrototypeOf(openPool()),
});

${closeFunction(`if (opened === undefined) return; // never used (the memory store under tests): nothing to end
      ${store.close}`)}`;
}

function closeFunction(close: string): string {
  return `let closing: Promise<void> | undefined;

/**
 * Ends the store's pool, once however often it is called: from your process's shutdown, after the server stops taking
 * requests, not from an app's close (every app this process builds shares the pool). Optional: an idle pool does not
 * keep the process alive. Safe when the pool never connected (the memory store under tests).
 */
export function closeIdempotency(): Promise<void> {
  if (closing === undefined)
    closing = (async () => {
      ${close}
    })();
  return closing;
}`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A path that can stand in a line comment as it is (no line break, no control character, nothing unusual). */
const PLAIN_PATH = /^[\w./@+-]+$/;
const PARTS = ['host', 'port', 'user', 'password', 'database'] as const;

/** `process.env['NAME']`, printed by the TS factory (single quotes: the house style). */
function envRead(name: string): string {
  const f = ts.factory;
  const read = f.createElementAccessExpression(f.createPropertyAccessExpression(f.createIdentifier('process'), 'env'), f.createStringLiteral(name, true));
  return ts.createPrinter().printNode(ts.EmitHint.Expression, read, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));
}

/**
 * The pool line and its comment when the project's own code says where its PostgreSQL / MySQL database is
 * (inspect's `connections`): the same environment variables, a URL or the parts, with the file:line it mirrors.
 * Nothing (today's DATABASE_URL line) for another store, another kind, a name that is not a plain identifier, or the
 * project's own DATABASE_URL, which today's line already reads.
 */
function projectConnection(storeId: string, connection: StoreConnection | undefined): { comment: string; pool: string } | undefined {
  if (connection?.store === 'redis' && storeId === 'redis') return redisConnection(connection);
  if (!connection || connection.store !== storeId || (storeId !== 'postgres' && storeId !== 'mysql')) return undefined;
  const names = [connection.url, ...PARTS.map((part) => connection[part])].filter((name): name is string => name !== undefined);
  if (names.length === 0 || !names.every((name) => ENV_NAME.test(name))) return undefined;
  if (connection.url === 'DATABASE_URL') return undefined;
  const where = PLAIN_PATH.test(connection.file) && Number.isInteger(connection.line) ? `${connection.file}:${connection.line}` : 'your code';
  const label = storeId === 'postgres' ? 'PostgreSQL' : 'MySQL / MariaDB';
  if (connection.url !== undefined) {
    return {
      comment: `As your database client connects (${where}): ${connection.url} is the ${label} server the store migration ran on.`,
      pool: `createPool(${envRead(connection.url)} ?? '', POLICY)`,
    };
  }
  const parts = PARTS.flatMap((part) => (connection[part] !== undefined ? [`  ${part}: ${envRead(connection[part]!)},`] : []));
  const unset = storeId === 'postgres' ? "\n// A part left unset falls back to pg's PGHOST / PGPORT / PGUSER / PGPASSWORD / PGDATABASE." : '';
  return {
    comment: `As your database client connects (${where}), from the same variables: the ${label} server the store\n// migration ran on.${unset}`,
    pool: `createPool(\n  {\n${parts.map((line) => `  ${line}`).join('\n')}\n  },\n  POLICY,\n)`,
  };
}

/**
 * The Redis the project's own code connects to (apply's findRedisConnection): its URL variable, else a URL made of
 * its host, port and password variables, read as its code reads them (`||`: an empty variable is unset). Nothing
 * (today's REDIS_URL line) for a name that is not a plain identifier, or the project's own REDIS_URL.
 */
function redisConnection(connection: StoreConnection): { comment: string; pool: string } | undefined {
  const names = [connection.url, connection.host, connection.port, connection.password].filter((name): name is string => name !== undefined);
  if (names.length === 0 || !names.every((name) => ENV_NAME.test(name)) || connection.url === 'REDIS_URL') return undefined;
  const where = PLAIN_PATH.test(connection.file) && Number.isInteger(connection.line) ? `${connection.file}:${connection.line}` : 'your code';
  const lazy = ', { lazyConnect: inTests }';
  if (connection.url !== undefined) {
    return { comment: `As your code connects to Redis (${where}): ${connection.url} is the server the keys live on.`, pool: `createPool(${envRead(connection.url)} || 'redis://127.0.0.1:6379', POLICY${lazy})` };
  }
  const host = `\${${envRead(connection.host!)} || '127.0.0.1'}`;
  const port = connection.port ? `\${${envRead(connection.port)} || '6379'}` : '6379';
  const password = connection.password ? `\${${envRead(connection.password)} ? \`:\${encodeURIComponent(${envRead(connection.password)} ?? '')}@\` : ''}` : '';
  return {
    comment: `As your code connects to Redis (${where}), from the same variables: the server the keys live on.`,
    pool: `createPool(\`redis://${password}${host}:${port}\`, POLICY${lazy})`,
  };
}

/** The `store:` line of createIdempotency() in an instance module: the memory store under tests (see instancePool). */
export function instanceStore(memory: boolean): string {
  return memory ? '  store: inTests ? createMemoryStore() : undefined,\n' : '';
}

/** `{ auth?: { user?: { id?: string | number } } }` for the path ['auth', 'user', 'id'], printed by the TS factory. */
function accessorType(path: readonly string[]): string {
  const f = ts.factory;
  let type: ts.TypeNode = f.createUnionTypeNode([f.createKeywordTypeNode(ts.SyntaxKind.StringKeyword), f.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword)]);
  for (const name of [...path].reverse()) type = f.createTypeLiteralNode([f.createPropertySignature(undefined, f.createIdentifier(name), f.createToken(ts.SyntaxKind.QuestionToken), type)]);
  const printer = ts.createPrinter({ removeComments: true });
  return printer.printNode(ts.EmitHint.Unspecified, type, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022)).replace(/\s*\n\s*/g, ' ').replace(/;(?= })/g, '');
}

/** `(req as typeof req & AuthenticatedUser).auth?.user?.id`, the optional chain printed by the TS factory. */
function accessor(param: string, path: readonly string[]): string {
  const f = ts.factory;
  let expression: ts.Expression = f.createParenthesizedExpression(
    f.createAsExpression(f.createIdentifier(param), f.createIntersectionTypeNode([f.createTypeQueryNode(f.createIdentifier(param)), f.createTypeReferenceNode('AuthenticatedUser')])),
  );
  for (const [index, name] of path.entries()) {
    expression = index === 0 ? f.createPropertyAccessExpression(expression, name) : f.createPropertyAccessChain(expression, f.createToken(ts.SyntaxKind.QuestionDotToken), f.createIdentifier(name));
  }
  return ts.createPrinter().printNode(ts.EmitHint.Expression, expression, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));
}

/** The comment over the instance's principal: what it must return, or why no protected action consults it yet. */
export function principalComment(scoped: boolean): string {
  return scoped
    ? '  // Keys are scoped to the caller: return the authenticated user / account / tenant id (undefined answers 401).'
    : `  // Not consulted yet: every protected action is global (one key space for all callers). Once an action is scoped
  // ("scope": "user" in idempotency.config.json), return the authenticated user / account / tenant id here
  // (undefined answers 401).`;
}

/**
 * `<scaffold>/instance.ts`: the one createIdempotency() of the app, which the routes apply wired import. Written once
 * (then it is the user's): the pool's URL and the principal are decisions the user reviews in the diff. The principal
 * reads what the handlers read (`principalPath`, found in them), else `user.id`; names from the code reach the text
 * only through the TypeScript printer.
 */
export function renderInstance(framework: WiredFramework, principalPath?: readonly string[], storeId?: string, memory = true, connection?: StoreConnection, scoped = true): string {
  const path = principalPath ?? ['user', 'id'];
  const param = framework === 'express' ? 'req' : 'request';
  const nest = framework === 'nestjs' && principalPath === undefined;
  const userType = nest ? '' : `\n/** What your authentication attaches to the request (as your handlers read it); adjust if it differs. */\ntype AuthenticatedUser = ${accessorType(path)};\n`;
  const principal = nest ? PRINCIPAL.nestjs : `(${param}) => ${accessor(param, path)}`;
  return `${instanceImport(memory)}

// Written once by \`idempotency-builder apply\`; yours to edit. Routes that apply wired import \`idempotency\` from here.
${instancePool(storeId, memory, connection)}
${userType}
export const idempotency = createIdempotency({
  pool,
${instanceStore(memory)}${principalComment(scoped)}
  principal: ${principal},
});
`;
}
