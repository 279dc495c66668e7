import { GRAPHQL_YOGA_CACHE, installGraphqlYoga } from '../scaffold/graphqlYogaPackages.js';
import { graphqlServerSuite } from './graphqlServerFixture.js';

/**
 * An orders API on graphql-yoga over node:http: no web framework package, one resolver-map mutation. Its own
 * maskedErrors lets the errors a client causes through (yoga masks every other error as "Unexpected error.").
 */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'orders-yoga', private: true, type: 'module', dependencies: { 'graphql-yoga': '^5.24.0', graphql: '^16.15.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', vitest: '^3.0.0', '@types/node': '^22.0.0', '@types/pg': '^8.11.0' } }, null, 2),
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: '.' } }, null, 2),
  'src/db.ts': "import pg from 'pg';\n\nexport const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });\n",
  'src/app.ts': `import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, maskError } from 'graphql-yoga';
import { db } from './db.js';

const typeDefs = \`
  type Order { id: ID! sku: String! quantity: Int! }
  type Query { health: String }
  type Mutation { placeOrder(sku: String!, quantity: Int!): Order }
\`;

/** Errors the caller caused, told to the caller by name, and the store's fail-closed refusal (retry later). */
const CALLER_ERRORS = new Set(['MismatchError', 'InFlightError', 'InvalidKeyError', 'StoreUnavailableError']);

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

export async function startApp() {
  const yoga = createYoga({
    schema: createSchema({ typeDefs, resolvers }),
    maskedErrors: {
      maskError: (error, message, isDev) => {
        const original = (error as { originalError?: Error | null }).originalError;
        return original && CALLER_ERRORS.has(original.name) ? new GraphQLError(original.message, { extensions: { code: original.name } }) : maskError(error, message, isDev);
      },
    },
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: \`http://127.0.0.1:\${port}/graphql\`, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
`,
  'src/main.ts': "import { startApp } from './app.js';\n\nconsole.log((await startApp()).url);\n",
};

await graphqlServerSuite({
  title: 'apply on a graphql-yoga server without a web framework',
  files: FILES,
  cache: GRAPHQL_YOGA_CACHE,
  install: installGraphqlYoga,
  schema: 'wt_applyplain_yoga',
  wrapped: `    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }, context: { request: { headers: { get(name: string): string | null } } }) => {
      return idempotency.placeOrder({ key: context.request.headers.get('idempotency-key') ?? undefined, fingerprintInput: args }, async () => {
        const { rows } = await db.query<{ id: number; sku: string; quantity: number }>(`,
  // What is left: the callers' header, and yoga's error masking (this app's maskError already lets them through).
  manual: [/^callers must now send an Idempotency-Key header/, /^graphql-yoga masks/],
  errorOf: (error) => error.extensions?.code,
});
