import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/init/express-route-auth');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function project(edit?: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-routeauth-'));
  dirs.push(dir);
  await cp(FIXTURE, dir, { recursive: true });
  await edit?.(dir);
  return dir;
}

/** The five creates of the fixture, as a user would list them (no scope: init decides it). */
const ACTIONS = [
  { name: 'registerUser', trigger: 'http', route: 'POST /auth/register', significantFields: ['email'], source: 'src/routes/auth.ts:11' },
  { name: 'createOrder', trigger: 'http', route: 'POST /orders', significantFields: ['sku', 'quantity'], source: 'src/routes/orders.ts:10' },
  { name: 'createRefund', trigger: 'http', route: 'POST /admin/refunds', significantFields: ['orderId', 'amount'], source: 'src/routes/admin.ts:7' },
  { name: 'createReview', trigger: 'http', route: 'POST /reviews', significantFields: ['productId', 'stars', 'text'], source: 'src/routes/reviews.ts:12' },
  { name: 'createReply', trigger: 'http', route: 'POST /reviews/:id/replies', significantFields: ['text'], source: 'src/routes/reviews.ts:22' },
];

async function initScopes(dir: string): Promise<{ scopes: Record<string, string | undefined>; assumptions: string[] }> {
  const out = new PassThrough();
  out.resume();
  await runInit({ cwd: dir, yes: true, date: '2026-01-15', actions: JSON.stringify(ACTIONS) }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
  const config = JSON.parse(await readFile(path.join(dir, 'idempotency.config.json'), 'utf8')) as { actions: Array<{ name: string; route?: string; scope?: string }>; assumptions: string[] };
  return { scopes: Object.fromEntries(config.actions.map((a) => [a.route, a.scope])), assumptions: config.assumptions };
}

describe('init --yes on Express decides each route’s key scope from what authenticates it', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('keys the public sign-up and the validate()-only route globally; router.use(), the mount’s middleware and route().all() authenticate the others', async () => {
    const { scopes, assumptions } = await initScopes(await project());
    expect(scopes).toMatchObject({ 'POST /auth/register': 'global', 'POST /reviews': 'global', 'POST /orders': undefined, 'POST /admin/refunds': undefined, 'POST /reviews/:id/replies': undefined });
    const said = assumptions.find((a) => a.startsWith('Nothing authenticates the route'));
    expect(said).toContain("inspection looked at the route's own middleware and hooks, use() and addHook() on its router before it, and the middleware where the router is mounted");
    expect(said).toContain('Nothing authenticates the routes of registerUser and createReview (');
  });

  it('an app-wide auth middleware before the mounts covers the sign-up route too (a per-user key is then right)', async () => {
    const dir = await project(async (root) => {
      const app = await readFile(path.join(root, 'src/app.ts'), 'utf8');
      await writeFile(path.join(root, 'src/app.ts'), app.replace("app.use(express.json());\n", 'app.use(express.json());\napp.use(checkCaller);\n'));
    });
    const { scopes, assumptions } = await initScopes(dir);
    expect(Object.values(scopes).every((scope) => scope === undefined)).toBe(true);
    expect(assumptions.some((a) => a.startsWith('Nothing authenticates the route'))).toBe(false);
  });

  it('a middleware it cannot read (a package it does not know, a neutral name) leaves the scope per user', async () => {
    const dir = await project(async (root) => {
      const auth = await readFile(path.join(root, 'src/routes/auth.ts'), 'utf8');
      await writeFile(path.join(root, 'src/routes/auth.ts'), auth.replace("import { validate } from '../middleware/validate.js';", "import { validate } from '../middleware/validate.js';\nimport { gate } from '@acme/edge';").replace("'/register', validate(registerSchema)", "'/register', gate, validate(registerSchema)"));
    });
    const { scopes } = await initScopes(dir);
    expect(scopes['POST /auth/register']).toBeUndefined();
    expect(scopes['POST /reviews']).toBe('global');
  });
});
