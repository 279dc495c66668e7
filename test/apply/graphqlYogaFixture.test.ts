import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { runInit } from '../../src/cli/init.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { createLogger } from '../../src/logger.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { GRAPHQL_YOGA_CACHE, installGraphqlYoga } from '../scaffold/graphqlYogaPackages.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, ROOT, snapshotTree } from './fixtureApp.js';

const postgresSkip = await postgresSkipReason();
const skip = postgresSkip ?? (await installGraphqlYoga());
if (skip) console.warn(`skipped: ${skip}`);

/**
 * An orders API on graphql-yoga over node:http: no web framework package, one resolver-map mutation. Its own
 * maskedErrors lets the errors a client causes through (yoga masks every other error as "Unexpected error.").
 */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'orders-yoga', private: true, type: 'module', dependencies: { 'graphql-yoga': '^5.24.0', graphql: '^16.15.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', vitest: '^3.0.0', '@types/node': '^22.0.0', '@types/pg': '^8.11.0' } }, null, 2),
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: '.' } }, null, 2),
  'src/db.ts': "import pg from 'pg';\n\nexport const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });\n",
  'src/app.ts': `import { createServer } from 'node:http';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, maskError } from 'graphql-yoga';
import { db } from './db.js';

const typeDefs = \`
  type Order { id: ID! sku: String! quantity: Int! }
  type Query { health: String }
  type Mutation { placeOrder(sku: String!, quantity: Int!): Order }
\`;

/** Errors the caller caused, told to the caller by name. */
const CALLER_ERRORS = new Set(['MismatchError', 'InFlightError', 'InvalidKeyError']);

const resolvers = {
  Query: { health: () => 'ok' },
  Mutation: {
    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }) => {
      const { rows } = await db.query<{ id: number; sku: string; quantity: number }>(
        'INSERT INTO orders (sku, quantity) VALUES ($1, $2) RETURNING id, sku, quantity',
        [args.sku, args.quantity],
      );
      return rows[0];
    },
  },
};

export function createApp() {
  const yoga = createYoga({
    schema: createSchema({ typeDefs, resolvers }),
    maskedErrors: {
      maskError: (error, message, isDev) => {
        const original = (error as { originalError?: Error | null }).originalError;
        return original && CALLER_ERRORS.has(original.name) ? new GraphQLError(original.message, { extensions: { code: original.name } }) : maskError(error, message, isDev);
      },
    },
  });
  return createServer(yoga);
}
`,
  'src/main.ts': "import { createApp } from './app.js';\n\ncreateApp().listen(4000);\n",
};

interface Answer {
  data: { placeOrder: { id: string; sku: string; quantity: number } | null } | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/**
 * Issue #19 outside NestJS: init --yes gives a graphql-yoga server with no web framework the plain wrapper, apply
 * --yes wraps its resolver-map mutation with it (the key from yoga's request in the context), the project
 * type-checks, a second apply changes nothing, and on real PostgreSQL one key runs the mutation once.
 */
describe.skipIf(skip !== undefined)('apply on a graphql-yoga server without a web framework', { timeout: 600_000 }, () => {
  let dir: string;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    // Inside the repository, so pg and @types resolve from its node_modules; yoga from the cache the app links to.
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-graphql-yoga-'));
    for (const [rel, text] of Object.entries(FILES)) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    }
    await symlink(path.join(GRAPHQL_YOGA_CACHE, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    await schema?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('init --yes gives the plain target; apply --yes wraps the mutation, type-checks, and is a no-op the second time', async () => {
    const quiet = createLogger({ out: process.stderr, err: process.stderr, color: false, quiet: true });
    await runInit({ cwd: dir, yes: true, date: '2026-01-15' }, { interactive: false, log: quiet });
    expect(await readdir(path.join(dir, 'src/idempotency'))).toContain('plain.ts');
    const unwrapped = async () => (await auditProject(dir)).findings.filter((f) => f.ruleId === 'action-not-wrapped');
    expect(await unwrapped()).toHaveLength(1);

    const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/app.ts', 'src/idempotency/instance.ts']);
    expect(first.edits.map((e) => e.summary)).toContain('runs placeOrder inside idempotency.placeOrder(…), keyed by the Idempotency-Key header of the request in its GraphQL context, its arguments fingerprinted');
    // Nothing says the mutation must be wired by hand: what is left is the callers' header and yoga's error masking.
    expect(first.manual.map((step) => step.reason)).toEqual([expect.stringMatching(/^callers must now send an Idempotency-Key header/), expect.stringMatching(/^graphql-yoga masks/)]);
    const app = await readFile(path.join(dir, 'src/app.ts'), 'utf8');
    expect(app).toContain("import { idempotency } from './idempotency/instance.js';");
    expect(app).toContain(`    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }, context: { request: { headers: { get(name: string): string | null } } }) => {
      return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => {
        const { rows } = await db.query<{ id: number; sku: string; quantity: number }>(`);
    expect(await compile(dir)).toBe('');
    expect(await unwrapped()).toEqual([]);

    const before = await snapshotTree(dir);
    const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it('runs a mutation sent twice with one key once, ten at once once, and refuses other arguments under that key', async () => {
    const migration = await readFile(path.join(dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8');
    schema = await createAppSchema('wt_applyplain_yoga', migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(dir, 'dist/src/app.js')).href)) as { createApp: () => Server };
    const { db } = (await import(pathToFileURL(path.join(dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const place = async (key: string | undefined, sku: string, quantity: number): Promise<Answer> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
        body: JSON.stringify({ query: 'mutation Place($sku: String!, $quantity: Int!) { placeOrder(sku: $sku, quantity: $quantity) { id sku quantity } }', variables: { sku, quantity } }),
      });
      return (await response.json()) as Answer;
    };
    const count = async (sku: string) => (await schema!.pool.query('SELECT count(*)::int AS n FROM orders WHERE sku = $1', [sku])).rows[0].n as number;
    try {
      const first = await place('yoga-key-1', 'SKU-1', 2);
      expect(first.errors).toBeUndefined();
      expect(first.data?.placeOrder).toMatchObject({ sku: 'SKU-1', quantity: 2 });
      expect(await place('yoga-key-1', 'SKU-1', 2)).toEqual(first);
      expect(await count('SKU-1')).toBe(1);

      const other = await place('yoga-key-1', 'SKU-1', 3);
      expect(other.data?.placeOrder ?? null).toBeNull();
      expect(other.errors?.map((e) => e.extensions?.code)).toEqual(['MismatchError']);
      expect(await count('SKU-1')).toBe(1);

      // Ten at once under a new key: one runs, the others wait it out as InFlightError or get its replay.
      const burst = await Promise.all(Array.from({ length: 10 }, () => place('yoga-key-2', 'SKU-2', 1)));
      const refused = burst.flatMap((answer) => answer.errors?.map((e) => e.extensions?.code) ?? []);
      expect(refused.every((code) => code === 'InFlightError'), refused.join(',')).toBe(true);
      const replay = await place('yoga-key-2', 'SKU-2', 1);
      expect(replay.errors).toBeUndefined();
      for (const answer of burst.filter((a) => a.errors === undefined)) expect(answer).toEqual(replay);
      expect(await count('SKU-2')).toBe(1);

      // No key: refused before anything runs.
      const keyless = await place(undefined, 'SKU-3', 1);
      expect(keyless.errors?.map((e) => e.extensions?.code)).toEqual(['InvalidKeyError']);
      expect(await count('SKU-3')).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  });
});
