import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express5 from 'express';
// @ts-expect-error -- Express 4 under an alias, without its own types; it is driven through the same calls as 5.
import express4 from 'express4';
import Fastify, { type FastifyRequest } from 'fastify';
import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`runtime semantics against PostgreSQL skipped: ${skip}`);

/** Shorter than the design's lease so the takeover test expires it with one UPDATE instead of waiting. */
const LEASE_MS = 30_000;
const RESPONSE_CAP = 1_024;

/**
 * One design for every adapter: placeOrder calls Stripe through a two-step saga (lease mode), addNote writes only
 * to the store's database (transactional mode). The handlers are written exactly as the generated README shows:
 * idempotencyOf(request) → saga.run(context, steps), provider keys from the step context, writes through context.db.
 */
async function design() {
  const model = await modelFor('express-stripe-payments', (raw) => {
    raw.actions = [
      {
        name: 'placeOrder',
        trigger: 'http',
        route: 'POST /orders',
        significantFields: ['sku', 'quantity'],
        provider: 'stripe',
        scope: 'user',
        steps: [{ name: 'reserveStock', compensation: 'releaseStock' }, { name: 'chargeCard', provider: 'stripe' }],
        expectedDurationMs: 300,
      },
      { name: 'addNote', trigger: 'http', route: 'POST /notes', significantFields: ['text'], scope: 'user', expectedDurationMs: 100 },
    ];
    raw.maxStoredResponseBytes = RESPONSE_CAP;
  });
  for (const action of model.actions) {
    action.lockTimeoutMs = LEASE_MS;
    action.heartbeatMs = undefined;
  }
  return model;
}

interface Effects {
  stepRuns: Record<string, number>;
  stripeKeys: string[];
  noteRuns: number;
  /** context.startedAt of every placeOrder attempt, by key. */
  startedAt: Record<string, number[]>;
}

/** The handlers' work, shared by every framework; each adapter only wires it. */
function service(scaffold: Loose, providers: Loose, idempotency: Loose, effects: Effects) {
  return {
    async placeOrder(context: Loose): Promise<{ status: number; body: unknown }> {
      (effects.startedAt[context.key] ??= []).push(context.startedAt);
      const results = await idempotency.saga.run(context, [
        {
          name: 'reserveStock',
          run: async () => {
            effects.stepRuns.reserveStock = (effects.stepRuns.reserveStock ?? 0) + 1;
            return 'reserved';
          },
        },
        {
          name: 'chargeCard',
          run: async (step: Loose) => {
            effects.stepRuns.chargeCard = (effects.stepRuns.chargeCard ?? 0) + 1;
            const { idempotencyKey } = providers.stripeRequestOptions(step);
            effects.stripeKeys.push(idempotencyKey);
            return idempotencyKey;
          },
        },
      ]);
      return { status: 201, body: { results, attempt: context.attempt } };
    },
    async addNote(context: Loose, text: string): Promise<{ status: number; body: unknown }> {
      effects.noteRuns += 1;
      await context.db.query('INSERT INTO notes (scope, key, text) VALUES ($1, $2, $3)', [context.scope, context.key, text]);
      if (text === 'fail') throw new Error('downstream failure');
      // A saga inside a transactional action records its steps in the same transaction.
      if (text === 'saga') await idempotency.saga.run(context, [{ name: 'writeStep', run: async () => 'written' }]);
      return { status: 201, body: text === 'big' ? { note: 'x'.repeat(RESPONSE_CAP * 4) } : { note: text } };
    },
    listOrders: () => ({ status: 200, body: { orders: [] } }),
    scaffold,
  };
}

type Service = ReturnType<typeof service>;
type Server = { url: string; close(): Promise<void> };

function expressApp(express: typeof express5, scaffold: Loose, svc: Service, idempotency: Loose) {
  const app = express();
  app.use(express.json());
  const { asyncHandler, idempotencyOf } = scaffold;
  // app.all: the middleware sees every method and must let GET through untouched.
  app.all(
    '/orders',
    idempotency.placeOrder,
    asyncHandler(async (req: Request, res: Response) => {
      const answer = req.method === 'GET' ? svc.listOrders() : await svc.placeOrder(idempotencyOf(req));
      res.status(answer.status).json(answer.body);
    }),
  );
  app.post(
    '/notes',
    idempotency.addNote,
    asyncHandler(async (req: Request, res: Response) => {
      const answer = await svc.addNote(idempotencyOf(req), req.body.text);
      res.status(answer.status).json(answer.body);
    }),
  );
  return app;
}

async function listenExpress(app: ReturnType<typeof express5>): Promise<Server> {
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const ADAPTERS: Record<string, (scaffold: Loose, svc: Service, idempotency: Loose) => Promise<Server>> = {
  'express 5': (scaffold, svc, idempotency) => listenExpress(expressApp(express5, scaffold, svc, idempotency)),
  'express 4': (scaffold, svc, idempotency) => listenExpress(expressApp(express4 as typeof express5, scaffold, svc, idempotency)),
  async fastify(scaffold, svc, idempotency) {
    const app = Fastify();
    const { idempotencyOf } = scaffold;
    app.post('/orders', idempotency.placeOrder, async (request, reply) => {
      const answer = await svc.placeOrder(idempotencyOf(request));
      return reply.code(answer.status).send(answer.body);
    });
    // The same hooks on a GET route: the method check lets it through without a record.
    app.get('/orders', idempotency.placeOrder, async (_request, reply) => reply.code(200).send(svc.listOrders().body));
    app.post('/notes', idempotency.addNote, async (request: FastifyRequest<{ Body: { text: string } }>, reply) => {
      const answer = await svc.addNote(idempotencyOf(request), request.body.text);
      return reply.code(answer.status).send(answer.body);
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  async nestjs(scaffold, svc, idempotency) {
    const { idempotencyOf } = scaffold;
    class AppController {
      async placeOrder(request: Request) {
        return (await svc.placeOrder(idempotencyOf(request))).body;
      }
      listOrders() {
        return svc.listOrders().body;
      }
      async addNote(request: Request, body: { text: string }, res: Response) {
        const answer = await svc.addNote(idempotencyOf(request), body.text);
        res.status(answer.status);
        return answer.body;
      }
    }
    const proto = AppController.prototype;
    decorate(proto, 'placeOrder', Post('orders'), HttpCode(201), scaffold.Idempotent(scaffold.ACTIONS.placeOrder));
    (Req() as ParameterDecorator)(proto, 'placeOrder', 0);
    decorate(proto, 'listOrders', Get('orders'), scaffold.Idempotent(scaffold.ACTIONS.placeOrder));
    decorate(proto, 'addNote', Post('notes'), HttpCode(201), scaffold.Idempotent(scaffold.ACTIONS.addNote));
    (Req() as ParameterDecorator)(proto, 'addNote', 0);
    (Body() as ParameterDecorator)(proto, 'addNote', 1);
    (Res({ passthrough: true }) as ParameterDecorator)(proto, 'addNote', 2);
    Controller()(AppController);
    class AppModule {}
    Module({ controllers: [AppController], providers: scaffold.idempotencyProviders(idempotency) })(AppModule);
    const app: INestApplication = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    return { url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`, close: () => app.close() };
  },
};

/** This repository compiles without experimentalDecorators, so decorators are applied as the compiler would. */
function decorate(target: object, name: string, ...decorators: MethodDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(target, name)!;
  for (const decorator of decorators.reverse()) decorator(target, name, descriptor);
  Object.defineProperty(target, name, descriptor);
}

const FRAMEWORK_OF: Record<string, 'express' | 'fastify' | 'nestjs'> = { 'express 5': 'express', 'express 4': 'express', fastify: 'fastify', nestjs: 'nestjs' };

describe.skipIf(skip !== undefined).each(Object.keys(ADAPTERS))('runtime semantics on %s', (adapter) => {
  let generated: Generated;
  let schema: Schema;
  let server: Server;
  const effects: Effects = { stepRuns: {}, stripeKeys: [], noteRuns: 0, startedAt: {} };

  beforeAll(async () => {
    const model = await design();
    model.stack.framework = FRAMEWORK_OF[adapter]!;
    generated = await generateAndCompile(model, `semantics-${FRAMEWORK_OF[adapter]}`, adapter === 'nestjs' ? { experimentalDecorators: true, emitDecoratorMetadata: true } : {});
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, `sem_${FRAMEWORK_OF[adapter]}`);
    await schema.pool.query('CREATE TABLE notes (scope text NOT NULL, key text NOT NULL, text text NOT NULL)');
    // Makes the completion of a chosen key fail on the server, the way a lost connection or a full disk would.
    await schema.pool.query(`CREATE TABLE fail_completion (key text PRIMARY KEY);
CREATE FUNCTION fail_completion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> 'PROCESSING' AND EXISTS (SELECT 1 FROM fail_completion WHERE key = NEW.key) THEN
    RAISE EXCEPTION 'completion refused for this test';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fail_completion BEFORE UPDATE ON idempotency_store FOR EACH ROW EXECUTE FUNCTION fail_completion();`);
    const scaffold = await loadScaffold(generated);
    const providers = await import(pathToFileURL(path.join(generated.outDir, 'providers.js')).href);
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (request: { headers: Record<string, unknown> }) => request.headers['x-user'] });
    server = await ADAPTERS[adapter]!(scaffold, service(scaffold, providers, idempotency, effects), idempotency);
  });

  afterAll(async () => {
    await server?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const post = (route: string, key: string | string[] | undefined, body: unknown, user = 'usr_a') => {
    const headers: Array<[string, string]> = [['content-type', 'application/json'], ['x-user', user]];
    for (const value of [key ?? []].flat()) headers.push(['idempotency-key', value]);
    return fetch(`${server.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  };
  const notes = async (key: string) =>
    Number((await schema.pool.query<{ n: string }>('SELECT count(*) AS n FROM notes WHERE key = $1', [key])).rows[0]!.n);

  it('the saga from the README runs through idempotencyOf(request); provider keys differ per principal, replays run nothing', async () => {
    const first = await post('/orders', 'key-saga', { sku: 'SKU-1', quantity: 2 });
    expect(first.status).toBe(201);
    const body = (await first.json()) as { results: string[]; attempt: number };
    expect(body.results[0]).toBe('reserved');
    expect(body.results[1]).toMatch(/^[0-9a-f]{64}$/);
    expect(body.attempt).toBe(1);
    const replay = await post('/orders', 'key-saga', { sku: 'SKU-1', quantity: 2 });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(effects.stepRuns).toEqual({ reserveStock: 1, chargeCard: 1 });

    // Another principal with the same client key: its own record, its own Stripe key.
    const theirs = await post('/orders', 'key-saga', { sku: 'SKU-1', quantity: 2 }, 'usr_b');
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(effects.stripeKeys).toHaveLength(2);
    expect(effects.stripeKeys[1]).not.toBe(effects.stripeKeys[0]);
  });

  it('lease mode: a completion that cannot be recorded is "outcome unknown", and the takeover reuses the provider keys', async () => {
    await schema.pool.query("INSERT INTO fail_completion VALUES ('key-unknown')");
    const before = effects.stripeKeys.length;
    const failed = await post('/orders', 'key-unknown', { sku: 'SKU-2', quantity: 1 });
    expect(failed.status).toBe(503);
    const problem = (await failed.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/outcome-unknown$/);
    expect(problem.detail).not.toMatch(/not processed/);
    await schema.pool.query("DELETE FROM fail_completion WHERE key = 'key-unknown'");

    // Still owned by the attempt that ran: a retry inside the lease is told to wait, nothing runs again.
    expect((await post('/orders', 'key-unknown', { sku: 'SKU-2', quantity: 1 })).status).toBe(409);
    const { rows } = await schema.pool.query("SELECT status, attempts FROM idempotency_store WHERE key = 'key-unknown'");
    expect(rows).toEqual([{ status: 'PROCESSING', attempts: 1 }]);

    // The lease lapses (as after a crash): the takeover is attempt 2, resumes after the recorded steps, same Stripe key.
    await schema.pool.query("UPDATE idempotency_store SET locked_until = now() - interval '1 second' WHERE key = 'key-unknown'");
    const retry = await post('/orders', 'key-unknown', { sku: 'SKU-2', quantity: 1 });
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as { attempt: number }).attempt).toBe(2);
    expect(effects.stripeKeys.length).toBe(before + 1);
    // Both attempts saw the record's creation time: parameters derived from it are the same on the retry.
    const { rows: created } = await schema.pool.query(
      "SELECT floor(extract(epoch FROM created_at) * 1000)::float8 AS ms FROM idempotency_store WHERE key = 'key-unknown'",
    );
    expect(effects.startedAt['key-unknown']).toEqual([created[0].ms, created[0].ms]);
  });

  it('transactional mode: a completion that fails rolls back the handler write, the retry runs once', async () => {
    await schema.pool.query("INSERT INTO fail_completion VALUES ('key-note')");
    const failed = await post('/notes', 'key-note', { text: 'hello' });
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as { type: string }).type).toMatch(/store-unavailable$/);
    expect(await notes('key-note')).toBe(0);
    expect((await schema.pool.query("SELECT 1 FROM idempotency_store WHERE key = 'key-note'")).rowCount).toBe(0);
    await schema.pool.query("DELETE FROM fail_completion WHERE key = 'key-note'");

    const retry = await post('/notes', 'key-note', { text: 'hello' });
    expect(retry.status).toBe(201);
    expect(await notes('key-note')).toBe(1);
    const replay = await post('/notes', 'key-note', { text: 'hello' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await notes('key-note')).toBe(1);
  });

  it('transactional mode: a handler that throws rolls back its write and releases the key (async errors reach the framework)', async () => {
    const failed = await post('/notes', 'key-throw', { text: 'fail' });
    expect(failed.status).toBe(500);
    expect(await notes('key-throw')).toBe(0);
    expect((await schema.pool.query("SELECT 1 FROM idempotency_store WHERE key = 'key-throw'")).rowCount).toBe(0);
  });

  it('transactional mode: concurrent duplicates wait on the key and get the replay or 409, the write happens once', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => post('/notes', 'key-concurrent', { text: 'once' })));
    expect(responses.map((response) => response.status).filter((status) => status !== 201 && status !== 409)).toEqual([]);
    expect(await notes('key-concurrent')).toBe(1);
  });

  it('transactional mode: saga steps are recorded in the claim transaction and commit with it', async () => {
    expect((await post('/notes', 'key-tx-saga', { text: 'saga' })).status).toBe(201);
    const { rows } = await schema.pool.query("SELECT step_name, status FROM idempotency_saga_steps WHERE key = 'key-tx-saga'");
    expect(rows).toEqual([{ step_name: 'writeStep', status: 'DONE' }]);
  });

  it('a response above the cap is sent once; the retry gets response-not-replayable and nothing runs again', async () => {
    const first = await post('/notes', 'key-big', { text: 'big' });
    expect(first.status).toBe(201);
    expect((await first.text()).length).toBeGreaterThan(RESPONSE_CAP);
    const runs = effects.noteRuns;
    const retry = await post('/notes', 'key-big', { text: 'big' });
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { type: string }).type).toMatch(/response-not-replayable$/);
    expect(effects.noteRuns).toBe(runs);
    const { rows } = await schema.pool.query("SELECT response_body IS NULL AS dropped, length(response_hash) AS hash FROM idempotency_store WHERE key = 'key-big'");
    expect(rows).toEqual([{ dropped: true, hash: 64 }]);
  });

  it('another method on the route passes through: no key needed, no record', async () => {
    const before = (await schema.pool.query('SELECT count(*)::int AS n FROM idempotency_store')).rows[0].n;
    const response = await fetch(`${server.url}/orders`, { headers: { 'x-user': 'usr_a' } });
    expect(response.status).toBe(200);
    expect((await schema.pool.query('SELECT count(*)::int AS n FROM idempotency_store')).rows[0].n).toBe(before);
  });

  it('a repeated key header, a comma or a space in the key is 400; a quoted key is the same key', async () => {
    for (const key of [['key-twice', 'key-twice'], 'key,comma', 'key space']) {
      const response = await post('/notes', key, { text: 'grammar' });
      expect(response.status, JSON.stringify(key)).toBe(400);
    }
    expect((await post('/notes', '"key-quoted"', { text: 'quoted' })).status).toBe(201);
    expect((await post('/notes', 'key-quoted', { text: 'quoted' })).headers.get('idempotent-replayed')).toBe('true');
  });
});
