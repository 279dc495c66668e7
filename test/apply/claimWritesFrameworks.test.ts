import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { FastifyInstance } from 'fastify';
import type { Hono } from 'hono';
import { describeClaimWrites, MYSQL, POSTGRES, serveListening, type Framework } from './claimWritesSuite.js';
import { listening } from './fixtureApp.js';

const FRAMEWORKS: Framework[] = [
  {
    label: 'Fastify',
    fixture: 'fastify-claim-writes',
    store: POSTGRES,
    binding: 'const db = transactionOf(idempotencyOf(request)) ?? pool;',
    serve: async (app) => {
      const fastify = (app['buildApp'] as () => FastifyInstance)();
      const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
      return { url: address, close: () => fastify.close() };
    },
  },
  {
    label: 'Koa (@koa/router)',
    fixture: 'koa-claim-writes',
    store: POSTGRES,
    binding: 'const db = transactionOf(idempotencyOf(ctx)) ?? pool;',
    serve: serveListening,
  },
  {
    label: 'Koa (@koa/router)',
    fixture: 'koa-claim-writes-mysql',
    store: MYSQL,
    binding: 'const db = transactionOf(idempotencyOf(ctx)) ?? pool;',
    serve: serveListening,
  },
  {
    label: 'Hono (@hono/node-server)',
    fixture: 'hono-claim-writes',
    store: POSTGRES,
    binding: 'const db = transactionOf(idempotencyOf(c)) ?? pool;',
    serve: (app) => listening(serve({ fetch: (app['createApp'] as () => Hono)().fetch, port: 0, hostname: '127.0.0.1' }) as Server),
  },
];

for (const framework of FRAMEWORKS) await describeClaimWrites(framework);
