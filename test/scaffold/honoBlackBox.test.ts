import { Hono, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookRoom, describeBlackBox, type StartApp } from './adapterBlackBox.js';
import type { Generated } from './generateInto.js';
import { createSchema, type Loose, type Schema } from './harness.js';

/**
 * A Hono app on the generated middleware, driven through app.fetch with Web Requests only: the Web-standard
 * runtime path (the generated suite serves the same middleware with @hono/node-server).
 */
const startHono: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-user') });
  const app = new Hono();
  app.use(async (c, next) => {
    const refusal = Number(c.req.header('x-refuse'));
    if (refusal) return c.json({ error: 'refused before the action' }, refusal as ContentfulStatusCode);
    await next();
    return undefined;
  });
  app.post('/bookings', idempotency.createBooking, async (c) => {
    const answer = await bookRoom(counters, await c.req.json(), c.req.header('x-fail') !== undefined);
    return c.json(answer.json, answer.status as ContentfulStatusCode, answer.location ? { location: answer.location } : {});
  });
  app.onError((_error, c) => c.text('Internal Server Error', 500));
  return { send: async (path, init) => app.fetch(new Request(`http://hono.test${path}`, init)), close: async () => undefined };
};

/** Hono specifics: the route parameter in the fingerprint, an HTTPException(402) recorded and replayed, a 204 replayed empty. */
const describeHonoSpecifics = (compiled: () => { scaffold: Loose; generated: Generated; skip: string | undefined }) => {
  describe.skipIf(compiled().skip !== undefined)('Hono specifics, against PostgreSQL', () => {
    let schema: Schema;
    let app: Hono;
    let runs = 0;

    beforeAll(async () => {
      const { scaffold, generated } = compiled();
      schema = await createSchema(generated, 'hono_specifics');
      const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-user') });
      app = new Hono();
      app.post('/bookings/:bookingId/cancellations', idempotency.cancelBooking as MiddlewareHandler, async (c) => {
        runs += 1;
        const bookingId = c.req.param('bookingId');
        if (bookingId === 'bk_late') throw new HTTPException(402, { message: 'refund window closed' });
        if (bookingId === 'bk_quiet') return c.body(null, 204);
        return c.json({ cancelled: bookingId, run: runs }, 201);
      });
    });
    afterAll(async () => {
      await schema?.drop();
    });

    const cancel = (bookingId: string, key: string) =>
      app.fetch(
        new Request(`http://hono.test/bookings/${bookingId}/cancellations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-user': 'usr_1', 'idempotency-key': key },
          body: JSON.stringify({ reason: 'plans changed' }),
        }),
      );

    it('puts the route parameter in the fingerprint, records an HTTPException(402), replays a 204 without a body', async () => {
      expect((await cancel('bk_1', 'hono-cancel')).status).toBe(201);
      const other = await cancel('bk_2', 'hono-cancel');
      expect(other.status).toBe(409);
      expect(other.headers.get('content-type')).toContain('application/problem+json');

      const declined = await cancel('bk_late', 'hono-late');
      expect(declined.status).toBe(402);
      expect(await declined.text()).toBe('refund window closed');
      const replay = await cancel('bk_late', 'hono-late');
      expect([replay.status, replay.headers.get('idempotent-replayed'), await replay.text()]).toEqual([402, 'true', 'refund window closed']);

      expect((await cancel('bk_quiet', 'hono-quiet')).status).toBe(204);
      const quiet = await cancel('bk_quiet', 'hono-quiet');
      expect([quiet.status, quiet.headers.get('idempotent-replayed'), await quiet.text()]).toEqual([204, 'true', '']);
      expect(runs).toBe(3);
    });
  });
};

await describeBlackBox('hono', { 'Hono (Web Request in, Web Response out)': startHono }, { refusals: true, more: describeHonoSpecifics });
