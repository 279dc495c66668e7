import type { Language, PackageManager, StackFacts, TestFramework } from '../types.js';
import type { Manifest } from './readManifest.js';
import { pickConnections } from './storeConnection.js';

export type PackageStack = Omit<StackFacts, 'packages'>;

/** Dependency name → fact. Order matters only for readability; results are sorted. */
const FRAMEWORKS: Record<string, string> = {
  express: 'express', fastify: 'fastify', '@nestjs/core': 'nestjs', koa: 'koa', '@koa/router': 'koa',
  'koa-router': 'koa', hono: 'hono', next: 'nextjs',
};
const ORMS: Record<string, string> = {
  '@prisma/client': 'prisma', prisma: 'prisma', 'drizzle-orm': 'drizzle', typeorm: 'typeorm', knex: 'knex',
  sequelize: 'sequelize', mongoose: 'mongoose', pg: 'pg', postgres: 'postgres.js', mysql2: 'mysql2', ioredis: 'ioredis',
  '@supabase/supabase-js': 'supabase-js', kysely: 'kysely', '@mikro-orm/core': 'mikro-orm',
};
const DATABASES: Record<string, string> = {
  pg: 'postgres', postgres: 'postgres', 'pg-promise': 'postgres', '@neondatabase/serverless': 'postgres',
  '@vercel/postgres': 'postgres', slonik: 'postgres', mysql2: 'mysql', mysql: 'mysql', mongodb: 'mongodb',
  mongoose: 'mongodb', ioredis: 'redis', redis: 'redis', '@upstash/redis': 'redis', '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/lib-dynamodb': 'dynamodb', dynamoose: 'dynamodb', 'better-sqlite3': 'sqlite', sqlite3: 'sqlite',
  // libSQL is usually a remote database (Turso) every instance shares, not a file on one machine.
  '@libsql/client': 'libsql', '@libsql/kysely-libsql': 'libsql', '@prisma/adapter-libsql': 'libsql',
  '@supabase/supabase-js': 'postgres', '@supabase/postgrest-js': 'postgres',
  '@planetscale/database': 'mysql', mariadb: 'mysql', '@vercel/kv': 'redis', 'kysely-neon': 'postgres',
  '@electric-sql/pglite': 'postgres', 'postgres-js': 'postgres', '@prisma/adapter-neon': 'postgres',
  '@prisma/adapter-planetscale': 'mysql', '@prisma/adapter-pg': 'postgres', 'drizzle-orm/neon-http': 'postgres',
};
const BROKERS: Record<string, string> = {
  bullmq: 'bullmq', '@nestjs/bullmq': 'bullmq', bull: 'bull', '@nestjs/bull': 'bull', kafkajs: 'kafka',
  '@confluentinc/kafka-javascript': 'kafka', 'node-rdkafka': 'kafka', amqplib: 'rabbitmq',
  'amqp-connection-manager': 'rabbitmq', '@golevelup/nestjs-rabbitmq': 'rabbitmq', '@aws-sdk/client-sqs': 'sqs',
  'sqs-consumer': 'sqs', '@ssut/nestjs-sqs': 'sqs', nats: 'nats', '@nats-io/transport-node': 'nats',
  'graphile-worker': 'graphile-worker', inngest: 'inngest', 'pg-boss': 'pg-boss', agenda: 'agenda', '@hokify/agenda': 'agenda',
  'bee-queue': 'bee-queue',
};
const PAYMENTS: Record<string, string> = {
  stripe: 'stripe', '@adyen/api-library': 'adyen', '@paypal/checkout-server-sdk': 'paypal',
  '@paypal/paypal-server-sdk': 'paypal', 'paypal-rest-sdk': 'paypal', braintree: 'braintree', square: 'square',
  '@mollie/api-client': 'mollie', '@paddle/paddle-node-sdk': 'paddle',
};
const PRISMA_PROVIDERS: Record<string, string> = {
  postgresql: 'postgres', postgres: 'postgres', cockroachdb: 'postgres', mysql: 'mysql', mongodb: 'mongodb',
  sqlite: 'sqlite', sqlserver: 'sqlserver',
};

export interface StackHints {
  /** Counts of inspected source files by language, for projects without a manifest. */
  tsFiles: number;
  jsFiles: number;
  hasTsconfig: boolean;
  /** `provider = "…"` from a schema.prisma, when present. */
  prismaProvider?: string;
  /** From lockfiles at the repository root. */
  lockfileManager: PackageManager;
}

export function detectStack(manifests: ReadonlyArray<Manifest | undefined>, hints: StackHints): PackageStack {
  const deps = new Set<string>();
  const scripts: string[] = [];
  let declaredManager: string | undefined;
  for (const manifest of manifests) {
    if (!manifest) continue;
    for (const dep of manifest.dependencies) deps.add(dep);
    scripts.push(...manifest.scripts);
    declaredManager ??= manifest.packageManager;
  }
  const pick = (table: Record<string, string>) => sorted([...deps].flatMap((d) => (Object.hasOwn(table, d) ? [table[d]!] : [])));
  const databases = pick(DATABASES);
  if (deps.has('@prisma/client') || deps.has('prisma')) {
    const fromSchema = hints.prismaProvider && Object.hasOwn(PRISMA_PROVIDERS, hints.prismaProvider) ? PRISMA_PROVIDERS[hints.prismaProvider] : undefined;
    if (fromSchema && !databases.includes(fromSchema)) databases.push(fromSchema);
  }
  return {
    language: detectLanguage(deps, hints),
    frameworks: pick(FRAMEWORKS),
    databases: sorted(databases),
    orms: pick(ORMS),
    brokers: pick(BROKERS),
    testFramework: detectTestFramework(deps, scripts),
    packageManager: detectManager(declaredManager, hints.lockfileManager),
    payments: pick(PAYMENTS),
  };
}

function detectLanguage(deps: Set<string>, hints: StackHints): Language {
  // The files decide; the manifest only breaks the tie for a project with no inspected sources yet.
  // Mostly JavaScript with a few .ts files (a migration in progress) still reads as a JavaScript project.
  if (hints.tsFiles > 0 && hints.tsFiles >= hints.jsFiles) return 'typescript';
  if (hints.jsFiles > 0) return 'javascript';
  return hints.hasTsconfig || deps.has('typescript') ? 'typescript' : 'unknown';
}

/**
 * The unit-test runner the generated tests should use. An end-to-end runner (Playwright) only answers when nothing
 * else does; scripts break ties (`tap`, `node --test`, `mocha`).
 */
function detectTestFramework(deps: Set<string>, scripts: string[]): TestFramework {
  const script = scripts.join('\n');
  if (deps.has('vitest')) return 'vitest';
  if (deps.has('jest') || deps.has('ts-jest') || deps.has('@swc/jest') || /\bjest\b/.test(script)) return 'jest';
  if (deps.has('mocha') || /\bmocha\b/.test(script)) return 'mocha';
  if (deps.has('tap') || deps.has('@tapjs/core') || /(^|[\s;&|])tap(\s|$)/m.test(script)) return 'tap';
  if (deps.has('ava')) return 'ava';
  if (scripts.some((s) => /\b(node|tsx|bun)\b[^&|;]*\s--test\b/.test(s)) || deps.has('borp')) return 'node-test';
  if (deps.has('@playwright/test') || deps.has('playwright')) return 'playwright';
  return 'unknown';
}

function detectManager(declared: string | undefined, fromLockfile: PackageManager): PackageManager {
  const name = declared?.split('@')[0];
  if (name === 'npm' || name === 'pnpm' || name === 'yarn' || name === 'bun') return name;
  return fromLockfile;
}

/**
 * Frameworks a package's code imports though its manifest does not declare them (a template whose express comes with
 * @shopify/shopify-app-express): module specifiers in, framework facts out.
 */
export function importedFrameworks(modules: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const module of modules) if (Object.hasOwn(FRAMEWORKS, module)) found.add(FRAMEWORKS[module]!);
  return sorted(found);
}

/** ORMs and query builders that can drive SQLite without the project importing its driver. */
const SQLITE_CAPABLE_ORMS = ['prisma', 'drizzle', 'typeorm', 'knex', 'sequelize', 'kysely', 'mikro-orm'];
/** The driver modules of each relational database, as code imports them (`mysql2/promise` counts as mysql2). */
const DRIVERS: Record<string, readonly string[]> = {
  postgres: ['pg', 'postgres', 'pg-promise', '@neondatabase/serverless', '@vercel/postgres', 'slonik'],
  mysql: ['mysql2', 'mysql', 'mariadb', '@planetscale/database'],
  sqlite: ['better-sqlite3', 'sqlite3', 'sqlite', 'node:sqlite', 'bun:sqlite'],
};

/** The ORM dialects a configuration names, by the ORM's own option: TypeORM `type`, Sequelize `dialect`, knex `client`. */
const DIALECTS: ReadonlyArray<{ library: RegExp; option: RegExp; databases: Record<string, string> }> = [
  {
    library: /typeorm|TypeOrm|DataSource/,
    option: /\btype\s*:\s*['"]([\w-]+)['"]/g,
    databases: { mysql: 'mysql', mariadb: 'mysql', 'aurora-mysql': 'mysql', postgres: 'postgres', cockroachdb: 'postgres', 'aurora-postgres': 'postgres', sqlite: 'sqlite', 'better-sqlite3': 'sqlite' },
  },
  { library: /sequelize|Sequelize/, option: /\bdialect\s*:\s*['"]([\w-]+)['"]/g, databases: { mysql: 'mysql', mariadb: 'mysql', postgres: 'postgres', sqlite: 'sqlite' } },
  {
    library: /knex|Knex/,
    option: /\bclient\s*:\s*['"]([\w-]+)['"]/g,
    databases: { pg: 'postgres', postgres: 'postgres', postgresql: 'postgres', mysql: 'mysql', mysql2: 'mysql', sqlite3: 'sqlite', 'better-sqlite3': 'sqlite' },
  },
];

/** The databases a file's ORM configuration names (itaminul/Doctor-Management-System's `type: 'mysql'` DataSource options). */
export function configuredDialects(text: string): string[] {
  const found: string[] = [];
  for (const { library, option, databases } of DIALECTS) {
    if (!library.test(text)) continue;
    for (const m of text.matchAll(option)) if (Object.hasOwn(databases, m[1]!)) found.push(databases[m[1]!]!);
  }
  return found;
}

/**
 * The package's databases without the relational ones it only declares. A driver one of its files imports keeps its
 * database; otherwise the dialect its ORM is configured for decides (a TypeORM app on MySQL that also declares `pg`
 * stores in MySQL), and without one a SQLite driver no ORM could load is dropped (orders-bullmq's root declares
 * better-sqlite3 for a sibling service and keeps its own data in MongoDB): SQLite ranks above the server databases
 * as the store, and a local file is no store for several hosts.
 */
export function usedDatabases(stack: PackageStack, modules: Iterable<string>, configured: ReadonlySet<string> = new Set()): string[] {
  const imported = [...modules];
  const importsDriver = (database: string) => (DRIVERS[database] ?? []).some((driver) => imported.some((module) => module === driver || module.startsWith(`${driver}/`)));
  return stack.databases.filter((database) => {
    if (!Object.hasOwn(DRIVERS, database) || importsDriver(database)) return true;
    if (configured.size > 0 && [...configured].some((d) => stack.databases.includes(d))) return configured.has(database);
    return database !== 'sqlite' || stack.orms.some((orm) => SQLITE_CAPABLE_ORMS.includes(orm));
  });
}

export function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** Union of package stacks: the repository-level answer for a monorepo. */
export function mergeStacks(base: PackageStack, others: readonly PackageStack[]): PackageStack {
  const all = [base, ...others];
  const union = (key: 'frameworks' | 'databases' | 'orms' | 'brokers' | 'payments') => sorted(all.flatMap((s) => s[key]));
  const language = all.some((s) => s.language === 'typescript')
    ? 'typescript'
    : all.some((s) => s.language === 'javascript') ? 'javascript' : 'unknown';
  const connections = pickConnections(all.flatMap((s) => s.connections ?? []), union('databases'));
  const authentication = all.some((s) => s.authentication !== undefined) ? sorted(all.flatMap((s) => s.authentication ?? [])) : undefined;
  return {
    language,
    frameworks: union('frameworks'),
    databases: union('databases'),
    orms: union('orms'),
    brokers: union('brokers'),
    testFramework: all.find((s) => s.testFramework !== 'unknown')?.testFramework ?? 'unknown',
    packageManager: base.packageManager,
    payments: union('payments'),
    ...(connections.length ? { connections } : {}),
    ...(authentication ? { authentication } : {}),
  };
}
