import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, settled, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const CONTROLLER = 'src/controllers/OrderController.ts';

/**
 * Issue #19: a routing-controllers method claims its key inside itself (its @UseBefore middleware would run before the
 * body parser and the currentUserChecker). apply --yes edits the method, the app type-checks under strict with
 * decorators, and the running app answers duplicates, replays, reused keys and missing keys as the contract says.
 */
/** The same controllers on routing-controllers' Express driver (the fixture's config) and its Koa driver. */
const VARIANTS = [
  { framework: 'express', app: 'dist/src/app.js', instance: "export const idempotency = createIdempotency({", leaseStep: true },
  { framework: 'koa', app: 'dist/src/koaApp.js', instance: 'principal: (ctx) =>', leaseStep: true },
] as const;

describe.skipIf(skip !== undefined).each(VARIANTS)('apply on the routing-controllers fixture app ($framework)', { timeout: 300_000 }, (variant) => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('routing-controllers', (config) => config.replace('"framework": "express"', `"framework": "${variant.framework}"`));
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('claims the key inside the controller method, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual([CONTROLLER, 'src/idempotency/controllerClaim.ts', 'src/idempotency/instance.ts']);
    expect(first.manual.map((m) => m.reason)).toEqual([
      expect.stringContaining('callers must now send an Idempotency-Key header'),
      // Its INSERT stays on the app's pool (lease mode): apply moves an Express or Koa route handler's writes onto
      // the claim's transaction, but not writes inside a routing-controllers method's claim callback.
      ...(variant.leaseStep ? [expect.stringContaining('a routing-controllers method claims its key inside itself, and apply does not move its writes')] : []),
    ]);
    expect(await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8')).toContain(variant.instance);
    const controller = await readFile(path.join(copy.dir, CONTROLLER), 'utf8');
    expect(controller).toContain("import { BadRequestError, Body, CurrentUser, Get, HeaderParam, HttpCode, JsonController, Param, Post, Res } from 'routing-controllers';");
    expect(controller).toContain("import { runOnceInController } from '../idempotency/controllerClaim.js';");
    expect(controller).toContain("async create(@Body() body: CreateOrder, @CurrentUser({ required: true }) user: User, @HeaderParam('Idempotency-Key', { type: String }) idempotencyKey: string | undefined, @Res() response: unknown) {");
    expect(controller).toContain("    return runOnceInController('createOrder', { caller: user, key: idempotencyKey, body, response }, async () => {\n      const price = PRICES[body.sku];");
    // The read route is left alone.
    expect(controller).toContain("  @Get('/:id')\n  async find(@Param('id') id: number) {\n    const { rows }");
    expect(await compile(copy.dir)).toBe('');

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.stale).toEqual([]);
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it('runs the order once for 50 concurrent requests (409 + Retry-After), replays it (Idempotent-Replayed), and answers a reused key 422, a missing key 400 and a store outage 503 + Retry-After', async () => {
    schema = await createAppSchema(`routing_controllers_${variant.framework}`, copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, owner text NOT NULL, sku text NOT NULL, quantity int NOT NULL, amount int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, variant.app)).href)) as { createApp: () => { listen(port: number): Server } };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
      const request = { key: 'order-7f3a', user: 'user-1', body: { sku: 'sku-mug', quantity: 2 } };
      const rows = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number;

      // The orders table is locked while the 50 requests arrive, so the one that claimed the key is still inside
      // its INSERT when every other one is answered: the duplicates really overlap it. The lock goes once the other 49
      // have their answers (counted, not timed).
      const lock = await schema.pool.connect();
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE orders IN EXCLUSIVE MODE');
      let answered = 0;
      let released: Promise<unknown> | undefined;
      const release = () => (released ??= lock.query('COMMIT').finally(() => lock.release()));
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': request.key, 'x-user-id': request.user }, body: JSON.stringify(request.body) })
            .then(async (res) => ({ status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after'), replayed: res.headers.get('idempotent-replayed') }))
            .finally(() => {
              answered += 1;
              if (answered === 49) void release();
            }),
        ),
      ).finally(release);
      await released;
      const statuses = answers.map((a) => a.status);
      // Every answer is the first one's (201) or a 409 while it still ran: exactly one of each kind of answer.
      expect(statuses.filter((s) => s === 201), statuses.join(',')).toHaveLength(1);
      expect(statuses.filter((s) => s === 409), statuses.join(',')).toHaveLength(49);
      // A duplicate in flight says when to come back, in the header as in the body: whole seconds, at least 1.
      for (const answer of answers.filter((a) => a.status === 409)) {
        const problem = JSON.parse(answer.body) as { retryAfterSeconds?: number };
        expect(problem).toMatchObject({ status: 409, title: 'Request in progress' });
        expect(answer.retryAfter, answer.body).toMatch(/^[1-9]\d*$/);
        expect(Number(answer.retryAfter)).toBe(problem.retryAfterSeconds);
        expect(answer.replayed).toBeNull();
      }
      const created = answers.find((a) => a.status === 201)!;
      expect(JSON.parse(created.body)).toMatchObject({ sku: 'sku-mug', quantity: 2, amount: 2400 });
      // The first run is not a replay.
      expect([created.replayed, created.retryAfter]).toEqual([null, null]);
      expect(await rows()).toBe(1);

      // The same request again: the first one's answer, without running it.
      const first = await settled(url, request);
      expect(first).toEqual({ status: created.status, body: created.body });
      expect(await rows()).toBe(1);

      // A replay answers the same status and body, says it is one, and runs nothing.
      const post = (headers: Record<string, string>, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-user-id': 'user-1', ...headers }, body: JSON.stringify(body) });
      const send = (headers: Record<string, string>, body: unknown) => post(headers, body).then(async (res) => ({ status: res.status, body: await res.text() }));
      const replay = await post({ 'idempotency-key': request.key }, request.body);
      expect({ status: replay.status, body: await replay.text() }).toEqual(first);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await rows()).toBe(1);

      // The same key with other input: 422, never the stored answer.
      const reused = await send({ 'idempotency-key': request.key }, { sku: 'sku-mug', quantity: 3 });
      expect(reused.status, reused.body).toBe(422);
      expect(JSON.parse(reused.body)).toMatchObject({ status: 422, title: 'Idempotency-Key reused' });

      // No key, or a malformed one: 400, nothing runs.
      const missing = await send({}, request.body);
      expect(missing.status, missing.body).toBe(400);
      expect(JSON.parse(missing.body)).toMatchObject({ status: 400, title: 'Idempotency-Key is missing' });
      expect((await send({ 'idempotency-key': 'two words' }, request.body)).status).toBe(400);

      // Keys are the caller's own: another user's same key is a new intent.
      const otherResponse = await post({ 'idempotency-key': request.key, 'x-user-id': 'user-2' }, request.body);
      const other = { status: otherResponse.status, body: await otherResponse.text() };
      expect(other.status, other.body).toBe(201);
      expect(otherResponse.headers.get('idempotent-replayed')).toBeNull();
      expect(await rows()).toBe(2);

      // The store out of reach (its table renamed away): 503 with Retry-After, fail closed, nothing runs.
      await schema.pool.query('ALTER TABLE idempotency_store RENAME TO idempotency_store_away');
      try {
        const outage = await post({ 'idempotency-key': 'order-outage' }, request.body);
        const problem = JSON.parse(await outage.text()) as { retryAfterSeconds?: number };
        expect(problem).toMatchObject({ status: 503, title: 'Service unavailable' });
        expect(outage.status).toBe(503);
        expect(outage.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
        expect(Number(outage.headers.get('retry-after'))).toBe(problem.retryAfterSeconds);
        expect(await rows()).toBe(2);
      } finally {
        await schema.pool.query('ALTER TABLE idempotency_store_away RENAME TO idempotency_store');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  });
});
