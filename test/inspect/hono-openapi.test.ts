import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { tempProjectSync } from '../helpers/tempProject.js';

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-hono-openapi-');

/** One resource the way @hono/zod-openapi starters lay it out: routes, handlers and the router that pairs them. */
function resource(name: string, field: string, table: string): Record<string, string> {
  return {
    [`src/routes/${name}/${name}.routes.ts`]: `import { createRoute, z } from '@hono/zod-openapi';

export const list = createRoute({ path: '/${name}', method: 'get', responses: {} });

export const create = createRoute({
  path: '/${name}',
  method: 'post',
  request: { body: { content: { 'application/json': { schema: z.object({ ${field}: z.string() }) } } } },
  responses: {},
});

export const remove = createRoute({ path: '/${name}/{id}', method: 'delete', responses: {} });
`,
    [`src/routes/${name}/${name}.handlers.ts`]: `import { db } from '@/db';

export const list = async (c) => c.json(await db.query.${table}.findMany());

export const create = async (c) => {
  const input = c.req.valid('json');
  const [row] = await db.insert(${table}).values({ ${field}: input.${field} }).returning();
  return c.json(row, 201);
};

export const remove = async (c) => c.body(null, 204);
`,
    [`src/routes/${name}/${name}.index.ts`]: `import { createRouter } from '@/lib/create-app';
import * as handlers from './${name}.handlers';
import * as routes from './${name}.routes';

export const ${name} = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.remove, handlers.remove);
`,
  };
}

describe('inspect a @hono/zod-openapi app (createRoute configs registered with .openapi)', () => {
  const dir = project({
    'package.json': JSON.stringify({ type: 'module', dependencies: { hono: '^4.9.0', '@hono/zod-openapi': '^1.1.0', '@hono/node-server': '^1.19.0', 'drizzle-orm': '^0.44.0', pg: '^8.16.0' } }),
    'src/lib/create-app.ts': `import { OpenAPIHono } from '@hono/zod-openapi';

export const createRouter = () => new OpenAPIHono({ strict: false });

export const createApp = () => {
  const app = createRouter();
  return app;
};
`,
    'src/db/index.ts': `import { drizzle } from 'drizzle-orm/node-postgres';
export const db = drizzle(process.env.DATABASE_URL);
`,
    ...resource('notes', 'body', 'notes'),
    ...resource('invoices', 'amount', 'invoices'),
    'src/routes/health.ts': `import { createRoute } from '@hono/zod-openapi';
import { createRouter } from '@/lib/create-app';

export const health = createRouter().openapi(createRoute({ method: 'post', path: '/health/{probe}', responses: {} }), (c) => c.text('ok'));
`,
    'src/routes/index.ts': `export * from './notes/notes.index';
export * from './invoices/invoices.index';
export { health } from './health';
`,
    'src/app.ts': `import { createApp } from '@/lib/create-app';
import { health, invoices, notes } from '@/routes';

const app = createApp();
const routers = [notes, invoices, health] as const;
routers.forEach((router) => app.route('/', router));

export default app;
`,
    'src/index.ts': `import { serve } from '@hono/node-server';
import app from './app';

serve({ fetch: app.fetch, port: 3000 });
`,
  });

  it('lists every mutating route with the method and path of its config, at the .openapi registration', async () => {
    const { findings } = await inspectProject(dir);
    const endpoints = findings.filter((f) => f.kind === 'endpoint');
    expect(endpoints.map((e) => [e.id, `${e.file}:${e.line}`])).toEqual([
      ['POST /health/:probe', 'src/routes/health.ts:4'],
      ['POST /invoices', 'src/routes/invoices/invoices.index.ts:7'],
      ['DELETE /invoices/:id', 'src/routes/invoices/invoices.index.ts:8'],
      ['POST /notes', 'src/routes/notes/notes.index.ts:7'],
      ['DELETE /notes/:id', 'src/routes/notes/notes.index.ts:8'],
    ]);
  });

  it("knows the paths are whole: the routers are mounted in a loop on the app that serve() runs, through a barrel", async () => {
    const { findings } = await inspectProject(dir);
    for (const e of findings.filter((f) => f.kind === 'endpoint')) expect(e.prefixResolved, e.id).toBe(true);
  });

  it("reads each handler through its own module's namespace import, never a same-named handler of another resource", async () => {
    const { findings } = await inspectProject(dir);
    const byId = new Map(findings.filter((f) => f.kind === 'endpoint').map((e) => [e.id, e]));
    expect(byId.get('POST /notes')).toMatchObject({ framework: 'hono', handler: 'handlers.create', bodyFields: ['body'], insertsRecord: true });
    expect(byId.get('POST /invoices')).toMatchObject({ framework: 'hono', handler: 'handlers.create', bodyFields: ['amount'], insertsRecord: true });
    expect(byId.get('DELETE /notes/:id')?.insertsRecord).toBeUndefined();
  });
});

describe('body fields of a handler that hands the body on whole', () => {
  it('lists none (the whole body is the fingerprint) when the body is spread or passed on, unless a schema declares it', async () => {
    const dir = project({
      'package.json': JSON.stringify({ type: 'module', dependencies: { hono: '^4.9.0', zod: '^4.1.0' } }),
      'src/app.ts': `import { Hono } from 'hono';
import { z } from 'zod';
import { hashSecret, insertAccount, insertNote } from './store';

const noteSchema = z.object({ title: z.string(), text: z.string() });
const app = new Hono();

app.post('/accounts', async (c) => {
  const input = await c.req.json();
  return c.json(await insertAccount({ ...input, secret: await hashSecret(input.secret) }), 201);
});

app.post('/notes', async (c) => {
  const input = noteSchema.parse(await c.req.json());
  if (!input.title) return c.json({ error: 'title' }, 400);
  return c.json(await insertNote(input), 201);
});

app.post('/greetings', async (c) => {
  const { name } = await c.req.json();
  return c.text(name);
});

export default app;
`,
      'src/store.ts': 'export const hashSecret = async (s) => s;\nexport const insertAccount = async (a) => a;\nexport const insertNote = async (n) => n;\n',
    });
    const { findings } = await inspectProject(dir);
    const fields = Object.fromEntries(findings.filter((f) => f.kind === 'endpoint').map((e) => [e.id, e.bodyFields]));
    expect(fields).toEqual({ 'POST /accounts': undefined, 'POST /notes': ['title', 'text'], 'POST /greetings': ['name'] });
  });
});
