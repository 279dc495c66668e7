import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A small project; `routes` maps each route (`POST /path`) to what authenticates it, [] when nothing does, absent when unknown. */
async function routesOf(dependencies: Record<string, string>, files: Record<string, string>): Promise<Record<string, string[]>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-routeauth-inspect-'));
  dirs.push(dir);
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', type: 'module', dependencies }));
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  const inspection = await inspectProject(dir);
  return Object.fromEntries((inspection.routeAuthentication ?? []).map((r) => [`${r.method} ${r.path}`, r.by]));
}

describe('what authenticates a route, read by what each middleware is', () => {
  it('Express: passport.authenticate and express-jwt authenticate, a path-scoped use() covers only its paths, a limiter does not', async () => {
    const routes = await routesOf(
      { express: '^4.19.0', passport: '^0.7.0', 'express-jwt': '^8.4.0', 'express-rate-limit': '^7.0.0' },
      {
        'src/app.ts': `import express from 'express';
import passport from 'passport';
import { expressjwt } from 'express-jwt';
import rateLimit from 'express-rate-limit';

const app = express();
app.use(express.json());
app.use('/api', expressjwt({ secret: 'x', algorithms: ['HS256'] }));
app.post('/api/orders', (req, res) => res.json({}));
app.post('/sessions', passport.authenticate('local'), (req, res) => res.json({}));
app.post('/contact', rateLimit({ windowMs: 1000 }), (req, res) => res.json({}));
app.listen(3000);
`,
      },
    );
    expect(routes).toEqual({ 'POST /api/orders': ["expressjwt({ secret: 'x', algorithms: ['HS256'] })"], 'POST /sessions': ["passport.authenticate('local')"], 'POST /contact': [] });
  });

  it('Koa: koa-jwt on the app before the router is mounted covers its routes; after it, it does not', async () => {
    const app = (order: 'before' | 'after') => `import Koa from 'koa';
import jwt from 'koa-jwt';
import { router } from './router.js';

const app = new Koa();
${order === 'before' ? "app.use(jwt({ secret: 'x' }));\napp.use(router.routes());" : "app.use(router.routes());\napp.use(jwt({ secret: 'x' }));"}
app.listen(3000);
`;
    const router = "import Router from '@koa/router';\nexport const router = new Router();\nrouter.post('/orders', async (ctx) => { ctx.body = {}; });\n";
    const deps = { koa: '^2.15.0', '@koa/router': '^12.0.0', 'koa-jwt': '^4.0.0' };
    expect(await routesOf(deps, { 'src/app.ts': app('before'), 'src/router.ts': router })).toEqual({ 'POST /orders': ["jwt({ secret: 'x' })"] });
    expect(await routesOf(deps, { 'src/app.ts': app('after'), 'src/router.ts': router })).toEqual({ 'POST /orders': [] });
  });

  it('Fastify: an onRequest hook of the plugin scope or the route’s own preHandler authenticates; a plugin without one does not', async () => {
    const routes = await routesOf(
      { fastify: '^4.26.0', '@fastify/jwt': '^8.0.0' },
      {
        'src/server.ts': `import Fastify from 'fastify';
import { orders } from './orders.js';
import { signup } from './signup.js';

const app = Fastify();
app.register(orders, { prefix: '/orders' });
app.register(signup, { prefix: '/signup' });
app.listen({ port: 3000 });
`,
        'src/orders.ts': `import type { FastifyInstance } from 'fastify';
export async function orders(fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticate);
  fastify.post('/', async () => ({}));
}
`,
        'src/signup.ts': `import type { FastifyInstance } from 'fastify';
export async function signup(fastify: FastifyInstance) {
  fastify.post('/', async () => ({}));
  fastify.post('/invites', { preHandler: [fastify.authenticate] }, async () => ({}));
}
`,
      },
    );
    expect(routes).toEqual({ 'POST /orders': ['fastify.authenticate'], 'POST /signup': [], 'POST /signup/invites': ['fastify.authenticate'] });
  });

  it('Hono: hono/jwt on a path pattern covers the routes under it; a validator is no authentication', async () => {
    const routes = await routesOf(
      { hono: '^4.4.0', '@hono/zod-validator': '^0.2.0', '@hono/node-server': '^1.11.0' },
      {
        'src/index.ts': `import { Hono } from 'hono';
import { jwt } from 'hono/jwt';
import { zValidator } from '@hono/zod-validator';
import { serve } from '@hono/node-server';
import { z } from 'zod';

const app = new Hono();
app.use('/api/*', jwt({ secret: 'x' }));
app.post('/api/orders', (c) => c.json({}));
app.post('/signup', zValidator('json', z.object({ email: z.string() })), (c) => c.json({}));
serve({ fetch: app.fetch });
`,
      },
    );
    expect(routes).toEqual({ 'POST /api/orders': ["jwt({ secret: 'x' })"], 'POST /signup': [] });
  });

  it('Hono built in one chain (the RPC idiom): mounts, prefixes and chained middleware reach the routes; a factory-made limiter is judged by its body', async () => {
    const routes = await routesOf(
      { hono: '^4.4.0', '@hono/standard-validator': '^0.1.0', '@hono/node-server': '^1.11.0' },
      {
        'src/limits.ts': `import type { Context, Next } from 'hono';
export const createRateLimit = (max: number) => async (c: Context, next: Next) => {
  if (max < 0) return c.json({ error: 'slow down' }, 429);
  await next();
};
`,
        'src/auth/session.ts': `import type { Context, Next } from 'hono';
import { verify } from 'hono/jwt';
export const requireSession = async (c: Context, next: Next) => {
  const token = c.req.header('Authorization');
  c.set('user', await verify(token ?? '', 'x'));
  await next();
};
`,
        'src/auth/routes.ts': `import { Hono } from 'hono';
import { sValidator } from '@hono/standard-validator';
import { requireSession } from './session';
export const signupRoute = new Hono().post('/signup', sValidator('json', {} as never), async (c) => c.json({}));
export const accountRoute = new Hono().use(requireSession).post('/delete', async (c) => c.json({}));
`,
        'src/auth/index.ts': `import { Hono } from 'hono';
import { accountRoute, signupRoute } from './routes';
export const auth = new Hono()
  .use(async (c, next) => { c.set('started', Date.now()); await next(); })
  .get('/csrf', (c) => c.json({}))
  .route('/email', signupRoute)
  .route('/account', accountRoute);
`,
        'src/index.ts': `import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { auth } from './auth/index';
import { createRateLimit } from './limits';
const limit = createRateLimit(10);
const app = new Hono();

app.use(limit);
app.route('/api/auth', auth);
serve({ fetch: app.fetch });
`,
      },
    );
    expect(routes).toEqual({ 'POST /api/auth/email/signup': [], 'POST /api/auth/account/delete': ['requireSession'] });
  });

  it('a route without auth middleware whose handler refuses anonymous callers itself is authenticated by that call', async () => {
    const routes = await routesOf(
      { express: '^4.19.0' },
      {
        'src/session.ts': `import type { Request } from 'express';
export async function getSession(req: Request) {
  const user = (req as { session?: { user?: { id: string } } }).session?.user;
  if (!user) throw Object.assign(new Error('Unauthorized'), { status: 401 });
  return { user };
}
`,
        'src/app.ts': `import express from 'express';
import { getSession } from './session';
const app = express();
app.post('/password', async (req, res) => {
  const { user } = await getSession(req);
  res.json({ id: user.id });
});
app.post('/signup', async (req, res) => res.status(201).json({}));
app.listen(3000);
`,
      },
    );
    expect(routes).toEqual({ 'POST /password': ['getSession() in the handler'], 'POST /signup': [] });
  });
});
