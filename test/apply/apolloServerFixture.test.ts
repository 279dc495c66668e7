import { APOLLO_SERVER_CACHE, installApolloServer } from '../scaffold/apolloServerPackages.js';
import { graphqlServerSuite } from './graphqlServerFixture.js';

/**
 * An orders API on Apollo Server's standalone server: no web framework package, one resolver-map mutation, and a
 * context function that passes the Node request on as `req`.
 */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'orders-apollo', private: true, type: 'module', dependencies: { '@apollo/server': '^5.5.0', graphql: '^16.15.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', vitest: '^3.0.0', '@types/node': '^22.0.0', '@types/pg': '^8.11.0' } }, null, 2),
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: '.' } }, null, 2),
  'src/db.ts': "import pg from 'pg';\n\nexport const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });\n",
  'src/app.ts': `import type { IncomingMessage } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { db } from './db.js';

interface AppContext {
  req: IncomingMessage;
}

const typeDefs = \`
  type Order { id: ID! sku: String! quantity: Int! }
  type Query { health: String }
  type Mutation { placeOrder(sku: String!, quantity: Int!): Order }
\`;

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
  const server = new ApolloServer<AppContext>({ typeDefs, resolvers });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ req }),
  });
  return { url, stop: () => server.stop() };
}
`,
  'src/main.ts': "import { startApp } from './app.js';\n\nconsole.log((await startApp()).url);\n",
};

/** The plain wrapper's errors by their messages (plain.ts, core.ts). */
const WRAPPER_ERRORS: Readonly<Record<string, string>> = {
  'idempotency key reused with a different request': 'MismatchError',
  'a request with this idempotency key is still being processed': 'InFlightError',
  'idempotency key is missing': 'InvalidKeyError',
  'idempotency key is malformed': 'InvalidKeyError',
  'idempotency store unavailable during claim': 'StoreUnavailableError',
};

await graphqlServerSuite({
  title: 'apply on an Apollo Server (standalone) without a web framework',
  files: FILES,
  cache: APOLLO_SERVER_CACHE,
  install: installApolloServer,
  schema: 'wt_applyplain_apollo',
  wrapped: `    placeOrder: async (_parent: unknown, args: { sku: string; quantity: number }, context: { req: { headers: Record<string, string | string[] | undefined> } }) => {
      return idempotency.placeOrder({ key: context.req.headers['idempotency-key']?.toString(), fingerprintInput: args }, async () => {`,
  manual: [/^callers must now send an Idempotency-Key header/],
  // Apollo sends an error thrown by a resolver with its message (no stack trace under tests): the wrapper's own.
  errorOf: (error) => WRAPPER_ERRORS[error.message],
});
