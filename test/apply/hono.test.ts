import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { describeMiddlewareFixture } from './middlewareFixture.js';

describeMiddlewareFixture({
  fixture: 'hono',
  label: 'Hono',
  routeFile: 'src/routes/transfers.ts',
  wiredRoute: "app.post('/transfers', idempotency.createTransfer, async (c) => {",
  // What the handler reads: c.get('user').id, i.e. the context's variables.
  principal: 'principal: (c) => (c as typeof c & AuthenticatedUser).var?.user?.id,',
  // The handler's own insert on the project's pool (named db) moves onto the claim's transaction.
  movedWrites: 'const claimDb = transactionOf(idempotencyOf(c)) ?? db;',
  table: 'transfers',
  ddl: 'CREATE TABLE transfers (id serial PRIMARY KEY, sender text NOT NULL, recipient text NOT NULL, amount int NOT NULL)',
  route: '/transfers',
  request: { key: 'transfer-0b7c', user: 'sender-1', body: { to: 'acct-2', amount: 4000 } },
  serve: async (createApp) => {
    const server = serve({ fetch: (createApp() as Hono).fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise((resolve) => server.once('listening', resolve));
    return server;
  },
});
