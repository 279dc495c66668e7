import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { authenticationInCode, authenticationPackages } from '../../src/inspect/stack/authentication.js';

const manifest = (...deps: string[]) => ({ dependencies: new Set(deps), scripts: [], workspaces: [] });

describe('authentication facts', () => {
  it('names declared auth packages, by name or family prefix, and nothing else', () => {
    expect(authenticationPackages([manifest('express', 'passport', 'pg'), manifest('@clerk/nextjs', 'stripe')])).toEqual(['@clerk/nextjs', 'passport']);
    expect(authenticationPackages([manifest('type-graphql', 'pg', 'stripe'), undefined])).toEqual([]);
  });

  it('finds authentication written in the code', () => {
    expect(authenticationInCode('src/auth.ts', 'app.use((req, res, next) => { req.user = verify(req.headers.authorization); next(); });')).toBe('src/auth.ts (sets req.user)');
    expect(authenticationInCode('src/orders.controller.ts', '@UseGuards(AuthGuard)\nexport class Orders {}')).toBe('src/orders.controller.ts (a Nest guard)');
    expect(authenticationInCode('src/resolver.ts', 'if (req.user === undefined) return;')).toBeUndefined();
    // create-t3-app's protectedProcedure.
    expect(authenticationInCode('src/trpc.ts', 'if (!ctx.session?.user) {\n  throw new TRPCError({ code: "UNAUTHORIZED" });\n}')).toBe('src/trpc.ts (a tRPC procedure that refuses unauthenticated callers)');
  });
});

describe('inspection of authentication', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function project(deps: Record<string, string>, files: Record<string, string>): Promise<string> {
    dir = await mkdtemp(path.join(os.tmpdir(), 'transport-auth-'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', dependencies: deps }));
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    }
    return dir;
  }

  it('is empty for code that authenticates nobody, and lists what does', async () => {
    const none = await inspectProject(await project({ express: '^4' }, { 'src/app.ts': "import express from 'express';\nconst app = express();\napp.post('/orders', (req, res) => res.json({}));\n" }));
    expect(none.stack.authentication).toEqual([]);
    await rm(dir!, { recursive: true, force: true });
    const some = await inspectProject(await project({ express: '^4', jsonwebtoken: '^9' }, { 'src/auth.ts': 'export function auth(req: any, _res: any, next: () => void) { req.user = { id: 1 }; next(); }\n' }));
    expect(some.stack.authentication).toEqual(['jsonwebtoken', 'src/auth.ts (sets req.user)']);
  });

  it('follows workspace dependencies: a package authenticates through the workspace package it depends on', async () => {
    // The shape of t3-oss/create-t3-turbo@e69b585: @acme/api depends on @acme/auth, which declares better-auth.
    const root = await project({}, {
      'pnpm-workspace.yaml': 'packages:\n  - packages/*\n',
      'packages/api/package.json': JSON.stringify({ name: '@acme/api', dependencies: { '@acme/auth': 'workspace:*', '@trpc/server': '^11' } }),
      'packages/api/src/router.ts': 'export const create = (input: { title: string }) => input.title;\n',
      'packages/auth/package.json': JSON.stringify({ name: '@acme/auth', dependencies: { '@acme/db': 'workspace:*', 'better-auth': '^1' } }),
      'packages/auth/src/index.ts': 'export const auth = {};\n',
      'packages/db/package.json': JSON.stringify({ name: '@acme/db', dependencies: { 'drizzle-orm': '^0.44' } }),
      'packages/db/src/index.ts': 'export const db = {};\n',
    });
    const inspection = await inspectProject(root);
    const api = inspection.stack.packages?.find((p) => p.dir === 'packages/api');
    expect(api?.stack.authentication).toEqual(['better-auth (through @acme/auth)']);
    expect(inspection.stack.packages?.find((p) => p.dir === 'packages/db')?.stack.authentication).toEqual([]);
  });

  it('is unknown when no source file was read', async () => {
    const empty = await inspectProject(await project({ passport: '^0.7' }, {}));
    expect(empty.stack).not.toHaveProperty('authentication');
  });
});
