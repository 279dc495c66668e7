import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A graphql-yoga server on node:http, no HTTP framework package: its one action is a GraphQL mutation. */
async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-graphql-reference-'));
  dirs.push(dir);
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'orders-graph', type: 'module', dependencies: { 'graphql-yoga': '^5.3.0', graphql: '^16.8.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', vitest: '^1.6.0' } }, null, 2),
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }, null, 2),
    'src/db.ts': "import pg from 'pg';\nexport const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });\n",
    'src/server.ts': `import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';
import { pool } from './db.js';

const resolvers = {
  Query: { health: () => 'ok' },
  Mutation: {
    createOrder: async (_parent: unknown, args: { sku: string; quantity: number }) => {
      const { rows } = await pool.query('INSERT INTO orders (sku, quantity) VALUES ($1, $2) RETURNING id', [args.sku, args.quantity]);
      return rows[0];
    },
  },
};

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Order { id: ID! } type Query { health: String } type Mutation { createOrder(sku: String!, quantity: Int!): Order }',
    resolvers,
  }),
});
createServer(yoga).listen(4000);
`,
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  return dir;
}

describe('init --yes on a GraphQL server with no HTTP framework', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('gets the plain idempotent(fn) wrapper, not the Express adapter, and the terminal and document say so', async () => {
    const cwd = await project();
    const out = new PassThrough();
    let said = '';
    out.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await runInit({ cwd, yes: true, date: '2026-01-15' }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
    const config = JSON.parse(await readFile(path.join(cwd, 'idempotency.config.json'), 'utf8')) as { stack: { framework: string }; actions: Array<{ transport?: string }> };
    expect(config.stack.framework).toBe('unknown');
    expect(config.actions.map((action) => action.transport)).toEqual(['graphql']);

    const scaffold = await readdir(path.join(cwd, 'src/idempotency'));
    expect(scaffold).toContain('plain.ts');
    expect(scaffold).not.toContain('express.ts');
    const note = /No action is a plain HTTP route \(they are GraphQL mutations\), so no web framework is needed: src\/idempotency holds the plain idempotent\(fn\) wrapper \(no web framework \+ PostgreSQL/;
    expect(said).toMatch(note);
    expect(said).not.toMatch(/Express/);
    // Nothing of Express to install either.
    expect(said).not.toMatch(/\bexpress\b/);
    const docs = path.join(cwd, 'docs');
    const names = (await readdir(docs, { recursive: true })).filter((name) => name.endsWith('.html'));
    const document = (await Promise.all(names.map((name) => readFile(path.join(docs, name), 'utf8')))).join('\n');
    expect(document).toContain("no action is a plain HTTP route (they are GraphQL mutations): the code is the plain idempotent(fn) wrapper");
    expect(document).toContain('the code is the plain idempotent(fn) wrapper');
    expect(document).not.toContain('express.ts');
    expect(document).not.toContain('minimal request/response interface');
  });
});
