import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const ROUTES = 'src/routes/notes.routes.ts';
const REQUEST = { key: 'note-3f9a', user: 'writer-1', body: { title: 'Groceries', body: 'milk, eggs' } };

/** One POST /notes with the fixture's auth header and a key. */
const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-user-id': REQUEST.user }, body: JSON.stringify(body) });

// Issue #19: a @hono/zod-openapi app (routes in one file, handlers in another, auth as the route's middleware) wired by apply.
describe.skipIf(skip !== undefined)('apply on the @hono/zod-openapi fixture app', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('hono-openapi');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('adds the middleware to the route config after auth, type-checks under --strict, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    // The handler's INSERT on the app's pool moves onto the claim's transaction (claimWrites.ts), as on any Hono route.
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/claimTransaction.ts', 'src/idempotency/instance.ts', 'src/routes/notes.handlers.ts', ROUTES, 'test/app.test.ts']);
    const routes = await readFile(path.join(copy.dir, ROUTES), 'utf8');
    expect(routes).toContain("import { idempotency } from '../idempotency/instance.js';");
    // auth stays first; the tuple keeps auth's context types for the handler (RouteHandler<typeof routes.create>).
    expect(routes).toContain("middleware: [auth, idempotency.createNote as import('hono').MiddlewareHandler<import('hono').Env>] as const,");
    // The other route of the file is not protected.
    expect(routes.match(/idempotency\.createNote/g)).toHaveLength(1);
    // The registration file is the user's as it was; the handler writes on the claim's transaction when it has one.
    expect(await readFile(path.join(copy.dir, 'src/routes/notes.index.ts'), 'utf8')).not.toContain('idempotency');
    expect(await readFile(path.join(copy.dir, 'src/routes/notes.handlers.ts'), 'utf8')).toContain('const claimDb = transactionOf(idempotencyOf(c)) ?? db;');
    const instance = await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('principal: (c) => (c as typeof c & AuthenticatedUser).var?.user?.id,');
    expect(first.manual.map((m) => m.reason)).toEqual([
      expect.stringContaining('callers must now send an Idempotency-Key header'),
      expect.stringContaining('run `idempotency-builder generate` after this apply: the scaffold runs createNote in transactional mode only once regenerated'),
      expect.stringContaining('they also need a store: the instance uses the memory store when NODE_ENV=test'),
    ]);
    expect(await compile(copy.dir)).toBe('');
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.stale).toEqual([]);
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it('runs the action once for 50 concurrent requests, replays, refuses a changed body, and leaves validation to zod', async () => {
    schema = await createAppSchema('openapi', copy.migration, 'CREATE TABLE notes (id serial PRIMARY KEY, owner text NOT NULL, title text NOT NULL, body text NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Hono };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = serve({ fetch: createApp().fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise((resolve) => server.once('listening', resolve));
    const pool = schema.pool;
    const count = async () => (await pool.query('SELECT count(*)::int AS n FROM notes')).rows[0].n as number;
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notes`;
      const { final } = await expectOneExecution(url, REQUEST, count);
      // The handler read the body the middleware had read before it (through zod's validator): the row holds it.
      const saved = (await pool.query('SELECT owner, title, body FROM notes')).rows;
      expect(saved).toEqual([{ owner: REQUEST.user, ...REQUEST.body }]);

      const replay = await post(url, REQUEST.key, REQUEST.body);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe(final.body);

      const changed = await post(url, REQUEST.key, { ...REQUEST.body, title: 'Hardware' });
      expect(changed.status).toBe(422);
      expect(changed.headers.get('content-type')).toContain('application/problem+json');

      // An invalid body under a fresh key: zod's own 400 (its error shape, not a problem document), nothing saved.
      const invalid = await post(url, 'note-invalid-1', { title: '', body: 42 });
      expect(invalid.status).toBe(400);
      expect(invalid.headers.get('content-type')).toContain('application/json');
      const error = (await invalid.json()) as { success?: boolean; error?: { name?: string } };
      expect(error.success).toBe(false);
      expect(error.error?.name).toBe('ZodError');
      expect(await count()).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  });
});
