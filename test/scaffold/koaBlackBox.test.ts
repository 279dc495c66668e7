import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookRoom, describeBlackBox, overHttp, type RunningApp, type StartApp } from './adapterBlackBox.js';
import type { Generated } from './generateInto.js';
import { createSchema, type Schema } from './harness.js';

/**
 * A Koa app on the generated middleware, without a body parser (the middleware reads the raw body and leaves it
 * parsed for the handler); an upstream middleware stands in for auth and rate limiting.
 */
const startKoa: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal: (ctx: Context) => ctx.get('x-user') || undefined });
  const app = new Koa();
  app.silent = true; // x-fail throws on purpose
  app.use(async (ctx, next) => {
    const refusal = Number(ctx.get('x-refuse'));
    if (!refusal) return next();
    ctx.status = refusal;
    ctx.body = { error: 'refused before the action' };
  });
  const router = new Router();
  router.post('/bookings', idempotency.createBooking, async (ctx) => {
    const answer = await bookRoom(counters, (ctx.request as { body?: { roomId?: string } }).body, ctx.get('x-fail') !== '');
    ctx.status = answer.status;
    if (answer.location) ctx.set('location', answer.location);
    ctx.body = answer.json;
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return overHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => new Promise((resolve) => server.close(() => resolve())));
};

/**
 * Koa specifics: a body parser that ran first (its parsed body is used, the stream is not read again), a route
 * parameter in the fingerprint, and `ctx.throw(402)` recorded as the answer Koa renders for it.
 */
const describeKoaSpecifics = (compiled: () => { scaffold: Record<string, unknown>; generated: Generated; skip: string | undefined }) => {
  describe.skipIf(compiled().skip !== undefined)('Koa specifics, against PostgreSQL', () => {
    let schema: Schema;
    let app: RunningApp;
    let runs = 0;

    beforeAll(async () => {
      const { scaffold, generated } = compiled();
      schema = await createSchema(generated, 'koa_specifics');
      const idempotency = (scaffold.createIdempotency as (setup: object) => Record<string, Koa.Middleware>)({ pool: schema.pool, principal: (ctx: Context) => ctx.get('x-user') || undefined });
      const koa = new Koa();
      koa.silent = true;
      // Stands in for @koa/bodyparser: parses first and leaves ctx.request.body, so the middleware must not read again.
      koa.use(async (ctx, next) => {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        Object.assign(ctx.request, { body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown });
        await next();
      });
      const router = new Router();
      router.post('/bookings/:bookingId/cancellations', idempotency.cancelBooking!, async (ctx) => {
        // Koa 3 sends web bodies too; the middleware finds them by shape (bk_web_response, _blob, _stream).
        const web = /^bk_web_(\w+)$/.exec(ctx.params.bookingId ?? '')?.[1];
        if (web) {
          const text = JSON.stringify({ cancelled: ctx.params.bookingId });
          ctx.status = 201;
          ctx.body = web === 'response' ? new Response(text, { status: 201 }) : web === 'blob' ? new Blob([text]) : new Response(text).body;
          return;
        }
        runs += 1;
        if (ctx.params.bookingId === 'bk_late') ctx.throw(402, 'refund window closed');
        ctx.status = 201;
        ctx.body = { cancelled: ctx.params.bookingId, run: runs };
      });
      koa.use(router.routes());
      const server = koa.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      app = overHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => new Promise((resolve) => server.close(() => resolve())));
    });
    afterAll(async () => {
      await app?.close();
      await schema?.drop();
    });

    const cancel = (bookingId: string, key: string) =>
      app.send(`/bookings/${bookingId}/cancellations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-user': 'usr_1', 'idempotency-key': key },
        body: JSON.stringify({ reason: 'plans changed' }),
      });

    it('uses the body a parser left, puts the route parameter in the fingerprint, and records ctx.throw(402)', async () => {
      const first = await cancel('bk_1', 'koa-cancel');
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ cancelled: 'bk_1', run: 1 });
      // Same key, another booking in the path: a different request, never the first one's answer.
      const other = await cancel('bk_2', 'koa-cancel');
      expect(other.status).toBe(409);
      expect(other.headers.get('content-type')).toContain('application/problem+json');

      const declined = await cancel('bk_late', 'koa-late');
      expect(declined.status).toBe(402);
      expect(await declined.text()).toBe('refund window closed');
      const replay = await cancel('bk_late', 'koa-late');
      expect(replay.status).toBe(402);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe('refund window closed');
      expect(runs).toBe(2);
    });

    it('records a web Response, Blob or ReadableStream body as its bytes and replays them', async () => {
      for (const kind of ['response', 'blob', 'stream']) {
        const expected = JSON.stringify({ cancelled: `bk_web_${kind}` });
        const first = await cancel(`bk_web_${kind}`, `koa-web-${kind}`);
        expect(first.status, kind).toBe(201);
        expect(await first.text(), kind).toBe(expected);
        const replay = await cancel(`bk_web_${kind}`, `koa-web-${kind}`);
        expect(replay.headers.get('idempotent-replayed'), kind).toBe('true');
        expect(await replay.text(), kind).toBe(expected);
      }
    });
  });
};

await describeBlackBox('koa', { 'Koa + @koa/router': startKoa }, { refusals: true, more: describeKoaSpecifics });
