import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express, { type Request, type Response } from 'express';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, listen, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`log-only rollout on Express and PostgreSQL skipped: ${skip}`);

/**
 * addNote writes only to the store's database, so it defaults to transactional mode: log-only must not use it.
 * placeOrder runs a two-step saga (lease mode): its steps must run for duplicates too, without a claim to record them.
 */
const design = (rollout: 'log-only' | 'enforce') =>
  modelFor('express-stripe-payments', (raw) => {
    const switched = rollout === 'log-only' ? { rollout } : {};
    raw.actions = [
      { name: 'addNote', trigger: 'http', route: 'POST /notes', significantFields: ['text'], scope: 'user', expectedDurationMs: 100, ...switched },
      {
        name: 'placeOrder',
        trigger: 'http',
        route: 'POST /orders',
        significantFields: ['sku'],
        provider: 'stripe',
        scope: 'user',
        steps: [{ name: 'reserveStock', compensation: 'releaseStock' }, { name: 'chargeCard', provider: 'stripe' }],
        expectedDurationMs: 300,
        ...switched,
      },
    ];
  });

const stepRuns: Record<string, number> = {};

type Server = { url: string; close(): Promise<void> };

/** The handler as the README writes it: through the claim's transaction when there is one, else the app's pool. */
function app(scaffold: Loose, idempotency: Loose, pool: pg.Pool): ReturnType<typeof express> {
  const server = express();
  server.use(express.json());
  server.post(
    '/notes',
    idempotency.addNote,
    scaffold.asyncHandler(async (req: Request, res: Response) => {
      const context = scaffold.idempotencyOf(req);
      const db = (context?.db as pg.PoolClient | undefined) ?? pool;
      const { rows } = await db.query<{ n: string }>('INSERT INTO notes (text) VALUES ($1) RETURNING id AS n', [req.body.text]);
      res.status(201).json({ note: Number(rows[0]!.n) });
    }),
  );
  server.post(
    '/orders',
    idempotency.placeOrder,
    scaffold.asyncHandler(async (req: Request, res: Response) => {
      const run = (name: string) => async () => ((stepRuns[name] = (stepRuns[name] ?? 0) + 1), name);
      const results = await idempotency.saga.run(scaffold.idempotencyOf(req), [
        { name: 'reserveStock', run: run('reserveStock') },
        { name: 'chargeCard', run: run('chargeCard') },
      ]);
      res.status(201).json({ results });
    }),
  );
  return server;
}

describe.skipIf(skip !== undefined)('log-only rollout through the Express adapter on PostgreSQL', () => {
  const folders: Generated[] = [];
  const servers: Server[] = [];
  let schema: Schema;
  let logOnly: Generated;
  let registry: Registry;
  let server: Server;

  beforeAll(async () => {
    logOnly = await generateAndCompile(await design('log-only'), 'logonly-express');
    folders.push(logOnly);
    expect(logOnly.tscOutput).toBe('');
    schema = await createSchema(logOnly, 'logonly');
    await schema.pool.query('CREATE TABLE notes (id serial PRIMARY KEY, text text NOT NULL)');
    const scaffold = await loadScaffold(logOnly);
    const metrics = await import(pathToFileURL(path.join(logOnly.outDir, 'metrics.js')).href);
    registry = new Registry();
    const idempotency = scaffold.createIdempotency({
      pool: schema.pool,
      principal: (req: Request) => req.headers['x-user'],
      events: metrics.createIdempotencyMetrics(registry),
    });
    server = await listen(app(scaffold, idempotency, schema.pool));
    servers.push(server);
  });

  afterAll(async () => {
    for (const running of servers) await running.close();
    await schema?.drop();
    for (const folder of folders) await rm(folder.dir, { recursive: true, force: true });
  });

  const post = (url: string, key: string | undefined, text: string) =>
    fetch(`${url}/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'usr_a', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ text }),
    });
  const notes = async (text: string) =>
    Number((await schema.pool.query<{ n: string }>('SELECT count(*) AS n FROM notes WHERE text = $1', [text])).rows[0]!.n);
  const counted = async () => {
    const values = (await registry.getSingleMetric('idempotency_log_only_total')!.get()).values;
    return Object.fromEntries(values.map((value) => [String(value.labels.would), value.value]));
  };

  it('the switch reaches settings.ts only when log-only', async () => {
    const settings = await readFile(path.join(logOnly.dir, 'src/idempotency/settings.ts'), 'utf8');
    expect(settings).toContain("rollout: 'log-only'");
  });

  it('runs the handler for every one of 10 concurrent same-key requests, records the first, counts the other 9', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(server.url, 'same-key', 'concurrent')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    expect(answers.every((answer) => answer.headers.get('idempotent-replayed') === null)).toBe(true);
    expect(await notes('concurrent')).toBe(10);
    const would = await counted();
    expect((would['in-flight'] ?? 0) + (would.replay ?? 0)).toBe(9);
    const { rows } = await schema.pool.query<{ status: string }>("SELECT status FROM idempotency_store WHERE key = 'same-key'");
    expect(rows).toEqual([{ status: 'COMPLETED' }]);
  });

  it('runs a request without a key (counted as refuse) and records nothing for it', async () => {
    const before = Number((await schema.pool.query<{ n: string }>('SELECT count(*) AS n FROM idempotency_store')).rows[0]!.n);
    const answer = await post(server.url, undefined, 'no key');
    expect(answer.status).toBe(201);
    expect(await notes('no key')).toBe(1);
    expect((await counted()).refuse).toBe(1);
    const after = Number((await schema.pool.query<{ n: string }>('SELECT count(*) AS n FROM idempotency_store')).rows[0]!.n);
    expect(after).toBe(before);
  });

  it('saga steps run for the first request (recorded) and again for a duplicate and a keyless one (not recorded)', async () => {
    const order = (key: string | undefined) =>
      fetch(`${server.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'usr_a', ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify({ sku: 'SKU-1' }),
      });
    for (const key of ['order-1', 'order-1', undefined]) {
      const answer = await order(key);
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({ results: ['reserveStock', 'chargeCard'] });
    }
    expect(stepRuns).toEqual({ reserveStock: 3, chargeCard: 3 });
    const { rows } = await schema.pool.query<{ n: string }>("SELECT count(*) AS n FROM idempotency_saga_steps WHERE key = 'order-1'");
    expect(Number(rows[0]!.n)).toBe(2);
    expect((await counted()).replay).toBeGreaterThanOrEqual(1);
  });

  it('with the store unreachable, the request still gets the handler answer', async () => {
    const scaffold = await loadScaffold(logOnly);
    // Nothing listens on port 1: every store call fails at once.
    const deadPool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMillis: 2_000 });
    const deadRegistry = new Registry();
    const metrics = await import(pathToFileURL(path.join(logOnly.outDir, 'metrics.js')).href);
    const idempotency = scaffold.createIdempotency({
      pool: deadPool,
      principal: (req: Request) => req.headers['x-user'],
      events: metrics.createIdempotencyMetrics(deadRegistry),
    });
    const down = await listen(app(scaffold, idempotency, schema.pool));
    servers.push(down);
    const answer = await post(down.url, 'store-down', 'store down');
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({ note: expect.any(Number) });
    expect(await notes('store down')).toBe(1);
    // The saga tracker shares the dead pool: its steps still run, unrecorded.
    const order = await fetch(`${down.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'usr_a', 'idempotency-key': 'order-down' },
      body: JSON.stringify({ sku: 'SKU-2' }),
    });
    expect(order.status).toBe(201);
    const values = (await deadRegistry.getSingleMetric('idempotency_log_only_total')!.get()).values;
    expect(values.map((value) => [value.labels.action, value.labels.would, value.value])).toEqual([
      ['addNote', 'store-unavailable', 1],
      ['placeOrder', 'store-unavailable', 1],
    ]);
    await deadPool.end();
  });

  it('regenerated with "enforce", the same records replay the first response and the handler does not run', async () => {
    const enforce = await generateAndCompile(await design('enforce'), 'logonly-enforce');
    folders.push(enforce);
    expect(enforce.tscOutput).toBe('');
    expect(await readFile(path.join(enforce.dir, 'src/idempotency/settings.ts'), 'utf8')).not.toContain('rollout');
    const scaffold = await loadScaffold(enforce);
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (req: Request) => req.headers['x-user'] });
    const enforcing = await listen(app(scaffold, idempotency, schema.pool));
    servers.push(enforcing);
    const { rows } = await schema.pool.query<{ body: Buffer }>("SELECT response_body AS body FROM idempotency_store WHERE key = 'same-key'");
    const replay = await post(enforcing.url, 'same-key', 'concurrent');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(await replay.arrayBuffer())).toEqual(rows[0]!.body);
    expect(await notes('concurrent')).toBe(10);
    // And without a key it is refused now.
    expect((await post(enforcing.url, undefined, 'no key')).status).toBe(400);
    expect(await notes('no key')).toBe(1);
  });
});
