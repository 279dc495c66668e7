import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookRoom, describeBlackBox, overHttp, type Counters, type StartApp } from './adapterBlackBox.js';
import type { Generated } from './generateInto.js';
import { createSchema, type Loose, type Schema } from './harness.js';

const principal = (request: unknown) =>
  request instanceof Request ? (request.headers.get('x-user') ?? undefined) : (request as http.IncomingMessage | undefined)?.headers['x-user']?.toString();

/** App Router: each route handler called with a Web Request, as Next calls it; a thrown handler becomes Next's 500. */
const startRoutes: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal });
  const routes: Record<string, (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>> = {
    '/bookings': idempotency.withIdempotency('createBooking', async (request: Request) => {
      const answer = await bookRoom(counters, (await request.json()) as { roomId?: string }, request.headers.has('x-fail'));
      return Response.json(answer.json, { status: answer.status, headers: answer.location ? { location: answer.location } : {} });
    }),
  };
  return {
    send: (path, init) =>
      routes[path]!(new Request(`http://next.test${path}`, init), { params: Promise.resolve({}) }).catch(() => new Response('Internal Server Error', { status: 500 })),
    close: async () => undefined,
  };
};

type PagesRes = http.ServerResponse & { status(code: number): PagesRes; json(body: unknown): void };

/** Pages Router: a tiny node server doing what Next's API resolver does (JSON body, query, res.status().json()). */
const startPages: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal });
  const routes: Record<string, (req: http.IncomingMessage, res: PagesRes) => Promise<void>> = {
    '/bookings': idempotency.withPagesIdempotency('createBooking', async (req: http.IncomingMessage & { body: { roomId?: string } }, res: PagesRes) => {
      const answer = await bookRoom(counters, req.body, req.headers['x-fail'] !== undefined);
      if (answer.location) res.setHeader('location', answer.location);
      res.status(answer.status).json(answer.json);
    }),
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown, query: Object.fromEntries(url.searchParams) });
      const api = Object.assign(res, {
        status: (code: number) => ((res.statusCode = code), api),
        json: (body: unknown) => void res.setHeader('content-type', 'application/json; charset=utf-8').end(JSON.stringify(body)),
      }) as PagesRes;
      await routes[url.pathname]!(req, api).catch(() => {
        if (!res.headersSent) res.writeHead(500).end('Internal Server Error');
      });
    })();
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return overHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => new Promise((resolve) => server.close(() => resolve())));
};

/** Server Actions: the key is the first argument, the principal comes from the app's session resolver. */
function describeServerActions(compiled: () => { scaffold: Loose; generated: Generated; skip: string | undefined }): void {
  describe('Server Action wrapper, against PostgreSQL', () => {
    let schema: Schema | undefined;
    let book: (key: string, input: { roomId: string; checkIn: string; checkOut: string; guests: number }) => Promise<{ bookingId: string; at: string }>;
    const session: { user?: string } = { user: 'usr_1' };
    const counters: Counters = { runs: 0 };
    const contexts: unknown[] = [];
    const input = { roomId: 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2 };

    beforeAll(async () => {
      const { scaffold, generated, skip } = compiled();
      if (skip) return;
      schema = await createSchema(generated, 'nextaction');
      const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: async () => session.user });
      book = idempotency.idempotentAction('createBooking', async (_key: string, data: { roomId: string }) => {
        contexts.push(scaffold.idempotencyOf());
        const answer = await bookRoom(counters, data, false);
        return { ...(answer.json as object), at: new Date(0) };
      });
    });
    afterAll(async () => {
      await schema?.drop();
    });

    it('runs once for 20 concurrent calls with one key; a repeat returns the stored result, the first call its JSON form too', async ({ skip }) => {
      if (compiled().skip) skip();
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => book('action-concurrent', input)));
      expect(counters.runs).toBe(1);
      const results = outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value);
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('InFlightError');
      expect(results.length).toBeGreaterThan(0);
      const again = await book('action-concurrent', input);
      expect(counters.runs).toBe(1);
      expect(again).toEqual(results[0]);
      expect(again.at).toBe('1970-01-01T00:00:00.000Z');
      expect(contexts).toEqual([expect.objectContaining({ key: 'action-concurrent', scope: 'usr_1', attempt: 1 })]);
    });

    it('refuses other input under the same key, a malformed key and a missing principal, without running', async ({ skip }) => {
      if (compiled().skip) skip();
      await book('action-mismatch', input);
      const before = counters.runs;
      await expect(book('action-mismatch', { ...input, roomId: 'room-99' })).rejects.toMatchObject({ name: 'MismatchError' });
      await expect(book('bad key', input)).rejects.toMatchObject({ name: 'InvalidKeyError' });
      session.user = undefined;
      await expect(book('action-anonymous', input)).rejects.toMatchObject({ name: 'PrincipalMissingError' });
      session.user = 'usr_2';
      // Another principal's identical key is their own: it runs.
      await book('action-mismatch', { ...input, roomId: 'room-99' });
      session.user = 'usr_1';
      expect(counters.runs).toBe(before + 1);
    });

    it('a form action (FormData after the bound key) fingerprints the form fields', async ({ skip }) => {
      if (compiled().skip) skip();
      const form = (roomId: string) => {
        const data = new FormData();
        for (const [name, value] of Object.entries({ ...input, roomId })) data.append(name, String(value));
        return data;
      };
      const submit = book as unknown as (key: string, data: FormData) => Promise<unknown>;
      const first = await submit('action-form', form('room-12'));
      const before = counters.runs;
      expect(await submit('action-form', form('room-12'))).toEqual(first);
      await expect(submit('action-form', form('room-99'))).rejects.toMatchObject({ name: 'MismatchError' });
      expect(counters.runs).toBe(before);
    });

    it('under useActionState (key, previous state, FormData) the form fields are the fingerprint, not the state', async ({ skip }) => {
      if (compiled().skip) skip();
      const form = (roomId: string) => {
        const data = new FormData();
        data.append('roomId', roomId);
        return data;
      };
      const submit = book as unknown as (key: string, state: unknown, data: FormData) => Promise<unknown>;
      const first = await submit('action-state', { error: '' }, form('room-12'));
      const before = counters.runs;
      // The previous state differs on a resubmit; the form does not: a replay.
      expect(await submit('action-state', { success: 'Booked' }, form('room-12'))).toEqual(first);
      await expect(submit('action-state', { error: '' }, form('room-99'))).rejects.toMatchObject({ name: 'MismatchError' });
      expect(counters.runs).toBe(before);
    });

    it('an action that ends in redirect() runs once; a repeat redirects to the same place without running', async ({ skip }) => {
      if (compiled().skip) skip();
      const { scaffold } = compiled();
      const idempotency = scaffold.createIdempotency({ pool: schema!.pool, principal: async () => session.user });
      let runs = 0;
      // What next/navigation's redirect() throws (Next.js 13 to 15 share the digest's prefix).
      const checkout = idempotency.idempotentAction('createBooking', async (_key: string, data: { roomId: string }) => {
        runs++;
        throw Object.assign(new Error('NEXT_REDIRECT'), { digest: `NEXT_REDIRECT;replace;/checkout/${data.roomId};303;` });
      });
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => checkout('action-redirect', input)));
      expect(runs).toBe(1);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        const reason = (outcome as PromiseRejectedResult).reason as { name: string; digest?: string };
        if (reason.name !== 'InFlightError') expect(reason.digest).toBe('NEXT_REDIRECT;replace;/checkout/room-12;303;');
      }
      await expect(checkout('action-redirect', input)).rejects.toMatchObject({ digest: 'NEXT_REDIRECT;replace;/checkout/room-12;303;' });
      expect(runs).toBe(1);
      // Any other error releases the key: the retry runs again.
      const failing = idempotency.idempotentAction('createBooking', async () => {
        runs++;
        throw new Error('card declined');
      });
      await expect(failing('action-throws', input)).rejects.toThrow('card declined');
      await expect(failing('action-throws', input)).rejects.toThrow('card declined');
      expect(runs).toBe(3);
    });
  });
}

/**
 * idempotencyOf() once the claim ended (recorded, released after a throw or a 5xx): a timer or promise the handler or
 * Server Action left pending sees no claim, with or without the request. A barrier, opened after every call settled,
 * decides when the pending reads run.
 */
function describeClaimEnd(compiled: () => { scaffold: Loose; generated: Generated; skip: string | undefined }): void {
  describe('idempotencyOf() after the claim ended, against PostgreSQL', () => {
    let schema: Schema | undefined;
    afterAll(async () => {
      await schema?.drop();
    });

    it('route handler (completed, thrown, 5xx) and Server Action (completed, thrown): pending callbacks see undefined', async ({ skip }) => {
      const { scaffold, generated, skip: reason } = compiled();
      if (reason) skip();
      schema = await createSchema(generated, 'nextlate');
      const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: () => 'usr_1' });
      let open!: () => void;
      const barrier = new Promise<void>((resolve) => (open = resolve));
      const late: Array<Promise<unknown>> = [];
      const leavePending = (request?: Request) => {
        const context: unknown = scaffold.idempotencyOf();
        expect(context).toBeDefined();
        if (request) expect(scaffold.idempotencyOf(request)).toBe(context);
        late.push(new Promise((resolve) => setTimeout(() => void barrier.then(() => resolve(scaffold.idempotencyOf())), 0)));
        late.push(barrier.then(() => scaffold.idempotencyOf()));
        if (request) late.push(barrier.then(() => scaffold.idempotencyOf(request)));
      };
      const route = idempotency.withIdempotency('createBooking', async (request: Request) => {
        leavePending(request);
        const outcome = request.headers.get('x-outcome');
        if (outcome === 'throw') throw new Error('provider timed out');
        return Response.json({ ok: outcome !== '5xx' }, { status: outcome === '5xx' ? 502 : 201 });
      });
      const call = (key: string, outcome: string) =>
        route(
          new Request('http://next.test/bookings', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-outcome': outcome },
            body: JSON.stringify({ roomId: 'room-12', checkIn: '2026-03-01', checkOut: '2026-03-04', guests: 2 }),
          }),
          { params: Promise.resolve({}) },
        );
      expect((await call('late-done', 'done')).status).toBe(201);
      await expect(call('late-throw', 'throw')).rejects.toThrow('provider timed out');
      expect((await call('late-5xx', '5xx')).status).toBe(502);
      const action = idempotency.idempotentAction('createBooking', async (_key: string, outcome: string) => {
        leavePending();
        if (outcome === 'throw') throw new Error('provider timed out');
        return { ok: true };
      });
      expect(await action('late-action-done', 'done')).toEqual({ ok: true });
      await expect(action('late-action-throw', 'throw')).rejects.toThrow('provider timed out');
      open();
      const seen = await Promise.all(late);
      expect(seen).toHaveLength(3 * 3 + 2 * 2);
      expect(seen.filter((context) => context !== undefined)).toEqual([]);
    });
  });
}

/** Pages routes get dynamic segments in req.query: the route template's ones count as params in the fingerprint. */
function describePagesParams(compiled: () => { scaffold: Loose; generated: Generated; skip: string | undefined }): void {
  describe('Pages API route with a dynamic segment, against PostgreSQL', () => {
    let schema: Schema | undefined;
    let handler: (req: Loose, res: PagesRes) => Promise<void>;
    let server: http.Server;
    let url = '';
    let runs = 0;

    beforeAll(async () => {
      const { scaffold, generated, skip } = compiled();
      if (skip) return;
      schema = await createSchema(generated, 'nextpages');
      const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal });
      // pages/api/bookings/[bookingId]/cancellations.ts
      handler = idempotency.withPagesIdempotency('cancelBooking', async (req: { query: { bookingId: string } }, res: PagesRes) => {
        runs += 1;
        res.status(201).json({ cancelled: req.query.bookingId, run: runs });
      });
      server = http.createServer((req, res) => {
        void (async () => {
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          const bookingId = /^\/bookings\/([^/]+)\/cancellations/.exec(req.url ?? '')?.[1] ?? '';
          Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, query: { bookingId } });
          const api = Object.assign(res, {
            status: (code: number) => ((res.statusCode = code), api),
            json: (body: unknown) => void res.setHeader('content-type', 'application/json; charset=utf-8').end(JSON.stringify(body)),
          }) as PagesRes;
          await handler(req, api);
        })();
      });
      server.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      if (server) await new Promise((resolve) => server.close(resolve));
      await schema?.drop();
    });

    it('same key with another booking in the path is a different request; the same path replays', async ({ skip }) => {
      if (compiled().skip) skip();
      const cancel = (bookingId: string) =>
        fetch(`${url}/bookings/${bookingId}/cancellations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-user': 'usr_1', 'idempotency-key': 'pages-cancel' },
          body: JSON.stringify({ reason: 'plans changed' }),
        });
      const first = await cancel('bk_1');
      expect(first.status).toBe(201);
      const body = await first.text();
      expect((await cancel('bk_2')).status).toBe(409);
      const replay = await cancel('bk_1');
      expect([replay.status, replay.headers.get('idempotent-replayed'), await replay.text()]).toEqual([201, 'true', body]);
      expect(runs).toBe(1);
    });
  });
}

await describeBlackBox('nextjs', { 'Next.js App Router route handlers': startRoutes, 'Next.js Pages API routes': startPages }, {
  refusals: false,
  more: (compiled) => {
    describeServerActions(compiled);
    describePagesParams(compiled);
    describeClaimEnd(compiled);
  },
});
