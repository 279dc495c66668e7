import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyResult } from '../../src/apply/index.js';
import { runApply } from '../../src/cli/apply.js';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { compile, ROOT, snapshotTree } from './fixtureApp.js';

const TUPLE_CAST = "as import('hono').MiddlewareHandler<import('hono').Env>";

/** Every shape of @hono/zod-openapi route config apply meets, one action each. */
const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ['node'], noEmit: true, paths: { '@/*': ['./src/*'] } },
    include: ['src'],
    exclude: ['src/**/*.test.ts'],
  }),
  'src/env.ts': `export interface AppEnv {
  Variables: { user: { id: string } };
}
`,
  'src/auth.ts': `import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './env.js';

export const auth = createMiddleware<AppEnv>(async (c, next) => {
  const id = c.req.header('x-user-id');
  if (!id) return c.json({ error: 'unauthenticated' }, 401);
  c.set('user', { id });
  await next();
});
`,
  'src/routes/schemas.ts': `import { z } from '@hono/zod-openapi';

export const json = { content: { 'application/json': { schema: z.object({ title: z.string() }) } }, required: true };
export const ok = { 201: { content: { 'application/json': { schema: z.object({ ok: z.boolean() }) } }, description: 'Done' } };
`,
  'src/routes/notes.routes.ts': `import { createRoute } from '@hono/zod-openapi';
import { auth } from '../auth.js';
import { json, ok } from './schemas.js';

export const create = createRoute({ method: 'post', path: '/notes', request: { body: json }, responses: ok });

export const tag = createRoute({ method: 'post', path: '/notes/{id}/tags', request: { body: json }, responses: ok });

const base = { method: 'post' as const, request: { body: json }, responses: ok };
export const copy = createRoute({ ...base, path: '/notes/{id}/copies' });

export const charge = createRoute({ method: 'post', path: '/notes/{id}/charges', request: { body: json }, responses: ok });

export const publish = createRoute({ method: 'post', path: '/notes/{id}/publications', responses: ok });

const audited = [auth];
export const lock = createRoute({ method: 'post', path: '/notes/{id}/lock', middleware: audited, responses: ok });
`,
  'src/stripe.ts': `import Stripe from 'stripe';

export const stripe = new Stripe(process.env['STRIPE_SECRET_KEY'] ?? 'sk_test_fixture');
`,
  'src/routes/notes.handlers.ts': `import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../env.js';
import { stripe } from '../stripe.js';
import type * as routes from './notes.routes.js';

export const charge: RouteHandler<typeof routes.charge, AppEnv> = async (c) => {
  const intent = await stripe.paymentIntents.create({ amount: 500, currency: 'eur' });
  return c.json({ ok: intent.id.length > 0 }, 201);
};
`,
  'src/routes/pin.route.ts': `import { createRoute } from '@hono/zod-openapi';
import { auth } from '../auth.js';
import { ok } from './schemas.js';

export default createRoute({
  method: 'post',
  path: '/notes/{id}/pin',
  middleware: [auth],
  responses: ok,
});
`,
  'src/routes/notes.index.ts': `import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import pinRoute from '@/routes/pin.route.js';
import { auth } from '@/auth.js';
import type { AppEnv } from '@/env.js';
import * as handlers from './notes.handlers.js';
import * as routes from './notes.routes.js';
import { json, ok } from './schemas.js';

const shareRoute = createRoute({
  method: 'post',
  path: '/notes/{id}/shares',
  middleware: [auth],
  request: { body: json },
  responses: ok,
});

export const notes = new OpenAPIHono<AppEnv>();
notes.openapi(routes.create, (c) => c.json({ ok: true }, 201));
notes.openapi(createRoute({ method: 'post', path: '/notes/{id}/archive', middleware: [auth] as const, responses: ok }), (c) => {
  // auth's context types reach the handler through the tuple: neither never nor any.
  // @ts-expect-error the user's id is a string
  const wrong: number = c.get('user').id;
  return c.json({ ok: c.get('user').id.length > 0 && wrong === 0 }, 201);
});
notes.openapi(shareRoute, (c) => c.json({ ok: true }, 201));
notes.openapi(pinRoute, (c) => c.json({ ok: true }, 201));
notes.openapi(routes.tag, (c) => c.json({ ok: true }, 201));
notes.openapi(routes.copy, (c) => c.json({ ok: true }, 201));
notes.openapi(routes.charge, handlers.charge);
notes.openapi(routes.publish, (c) => c.json({ ok: true }, 201));
notes.openAPIRegistry.registerPath(routes.publish);
notes.openapi(routes.lock, (c) => c.json({ ok: true }, 201));

// Version 2 of the API registers the tag route too.
export const notesV2 = new OpenAPIHono<AppEnv>().openapi(routes.tag, (c) => c.json({ ok: true }, 201));
`,
};

const INDEX = FILES['src/routes/notes.index.ts']!;
const lineOf = (needle: string) => INDEX.split('\n').findIndex((line) => line.includes(needle)) + 1;
const action = (name: string, route: string, needle: string) => ({ name, trigger: 'http', route, significantFields: ['title'], source: `src/routes/notes.index.ts:${lineOf(needle)}` });

const CONFIG = {
  actions: [
    action('createNote', 'POST /notes', 'routes.create'),
    action('archiveNote', 'POST /notes/:id/archive', "'/notes/{id}/archive'"),
    action('shareNote', 'POST /notes/:id/shares', 'openapi(shareRoute'),
    action('pinNote', 'POST /notes/:id/pin', 'openapi(pinRoute'),
    action('tagNote', 'POST /notes/:id/tags', 'notes.openapi(routes.tag'),
    action('copyNote', 'POST /notes/:id/copies', 'routes.copy'),
    { ...action('chargeNote', 'POST /notes/:id/charges', 'routes.charge'), provider: 'stripe' },
    action('publishNote', 'POST /notes/:id/publications', 'notes.openapi(routes.publish'),
    action('lockNote', 'POST /notes/:id/lock', 'routes.lock'),
  ],
  stack: { language: 'typescript', framework: 'hono', database: 'postgres', testFramework: 'vitest' },
  payments: ['stripe'],
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
  scaffold: { dir: 'src/idempotency' },
};

describe('apply on @hono/zod-openapi routes: the middleware goes into the route config', { timeout: 300_000 }, () => {
  let dir: string;
  let first: ApplyResult;
  const read = (file: string) => readFile(path.join(dir, file), 'utf8');

  beforeAll(async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-openapi-'));
    const files: Record<string, string> = { ...FILES, 'package.json': JSON.stringify({ name: 'notes', type: 'module', dependencies: { hono: '4.13.23', '@hono/zod-openapi': '1.6.3' } }), 'idempotency.config.json': JSON.stringify(CONFIG) };
    const model = buildDesign(parseConfig(JSON.stringify(CONFIG)), undefined, { now: new Date('2026-01-15T00:00:00Z') });
    for (const file of generateScaffold(model, { dir: 'src/idempotency' })) files[file.path] = file.contents;
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
    first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('edits each config where it is declared: imported by namespace, inline, local, default-imported through an alias', async () => {
    expect(first.stale).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/routes/notes.handlers.ts', 'src/routes/notes.index.ts', 'src/routes/notes.routes.ts', 'src/routes/pin.route.ts']);
    const routes = await read('src/routes/notes.routes.ts');
    expect(routes).toContain("import { idempotency } from '../idempotency/instance.js';");
    // No middleware yet: a plain list, which types the handler's context as before.
    expect(routes).toContain("export const create = createRoute({ method: 'post', path: '/notes', request: { body: json }, responses: ok, middleware: [idempotency.createNote] });");
    const pin = await read('src/routes/pin.route.ts');
    expect(pin).toContain("import { idempotency } from '../idempotency/instance.js';");
    // A plain list already: ours is appended after the project's auth.
    expect(pin).toContain('  middleware: [auth, idempotency.pinNote],\n');
    const index = await read('src/routes/notes.index.ts');
    // The file reaches the project through its alias: so does the import apply adds.
    expect(index).toContain("import { idempotency } from '@/idempotency/instance.js';");
    expect(index).toContain(`middleware: [auth, idempotency.archiveNote ${TUPLE_CAST}] as const, responses: ok }`);
    expect(index).toContain('  middleware: [auth, idempotency.shareNote],\n');
    // The registrations themselves are untouched.
    expect(index).toContain('notes.openapi(routes.create, (c) => c.json({ ok: true }, 201));');
    // A handler passed by name is followed to its file: its Stripe call sends the key derived from the claim.
    const handlers = await read('src/routes/notes.handlers.ts');
    expect(handlers).toContain("await stripe.paymentIntents.create({ amount: 500, currency: 'eur' }, stripeRequestOptions(idempotencyContext));");
    expect(handlers).toContain('const idempotencyContext = idempotencyOf(c);');
    expect(await read('src/routes/notes.routes.ts')).toContain('middleware: [idempotency.chargeNote]');
    // The handler that reads the caller is what the instance's principal reads.
    expect(await read('src/idempotency/instance.ts')).toContain('principal: (c) => (c as typeof c & AuthenticatedUser).var?.user?.id,');
  });

  it('leaves a config other code also uses, one that spreads another object, and a shared middleware list to the user with the reason', async () => {
    const routes = await read('src/routes/notes.routes.ts');
    for (const name of ['tagNote', 'copyNote', 'publishNote', 'lockNote']) expect(routes).not.toContain(`idempotency.${name}`);
    const left = ['tagNote', 'copyNote', 'publishNote', 'lockNote'];
    const reasons = first.manual.filter((m) => left.includes(m.action)).map((m) => `${m.action} ${m.file}:${m.line} ${m.reason}`);
    // A route left to the user gets no step about its principal or its callers' key: it is not protected yet.
    // Lines are those of the files as written (apply's import above them).
    expect(reasons).toEqual([
      `tagNote src/routes/notes.index.ts:${lineOf('notes.openapi(routes.tag') + 1} POST /notes/:id/tags is registered with @hono/zod-openapi's .openapi(…): its route config routes.tag is also registered by another .openapi(…) call (src/routes/notes.index.ts:${lineOf('// Version 2') + 1}), where the middleware would run (or be documented) too: give this registration its own createRoute config; add \`middleware: [idempotency.tagNote]\` to its route config by hand`,
      `publishNote src/routes/notes.index.ts:${lineOf('notes.openapi(routes.publish') + 1} POST /notes/:id/publications is registered with @hono/zod-openapi's .openapi(…): its route config routes.publish is also used by other code (src/routes/notes.index.ts:${lineOf('registerPath')}), where the middleware would run (or be documented) too: give this registration its own createRoute config; add \`middleware: [idempotency.publishNote]\` to its route config by hand`,
      "copyNote src/routes/notes.routes.ts:11 POST /notes/:id/copies: its route config spreads another object (...base), which may carry middleware that a middleware property of apply's would replace; add idempotency.copyNote to the route config routes.copy by hand",
      "lockNote src/routes/notes.routes.ts:18 POST /notes/:id/lock: its route config's middleware is a shared list (audited); give this route its own list with idempotency.lockNote last; add idempotency.lockNote to the route config routes.lock by hand",
    ]);
    // Wired routes have no step about the registration; each route left has exactly one.
    expect(first.manual.filter((m) => m.reason.includes('.openapi(…)')).map((m) => m.action)).toEqual(['tagNote', 'publishNote']);
  });

  it('type-checks under --strict, and a second apply changes nothing', async () => {
    expect(await compile(dir)).toBe('');
    const tree = await snapshotTree(dir);
    const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(again.stale).toEqual([]);
    expect(again.changes).toEqual([]);
    expect(await snapshotTree(dir)).toEqual(tree);
  });
});
