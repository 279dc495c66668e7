import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { expect, it } from 'vitest';
import { expectOneExecution } from './blackBox.js';
import { applyFirst, describeOnFixtureApp, expectAppliedCleanly } from './fixtureApp.js';

await describeOnFixtureApp('apply on the Fastify fixture app', 'fastify', (fixture) => {
  it('puts the generated hooks after the route\'s own preHandler (authentication), type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const { copy } = fixture;
    const first = await applyFirst(copy.dir);
    const routes = await readFile(path.join(copy.dir, 'src/routes/bookings.ts'), 'utf8');
    expect(routes).toContain("app.post<{ Body: BookingBody }>('/bookings', { schema: bookingSchema, preHandler: [requireUser, idempotency.createBooking.preHandler], onSend: idempotency.createBooking.onSend }, async (request, reply) => {");
    // The handler's own insert on the project's pool (named db, so the binding takes the next name) moves onto the
    // claim's transaction (claimWrites.ts); generate then runs the action in transactional mode.
    expect(routes).toContain('const claimDb = transactionOf(idempotencyOf(request)) ?? db;');
    expect(routes).toContain("await claimDb.query<{ id: number }>('INSERT INTO bookings");
    // The steps left: the app's callers must start sending the key (apply does not edit client code yet), and generate.
    expect(first.manual.map((m) => m.reason)).toEqual([
      expect.stringContaining('callers must now send an Idempotency-Key header'),
      expect.stringContaining('run `idempotency-builder generate` after this apply'),
      // The app's own test posts to the route (now with a key); its node:test script sets no NODE_ENV.
      expect.stringContaining('they also need a store: the instance uses the memory store when NODE_ENV=test'),
    ]);
    await expectAppliedCleanly(copy.dir);
  });

  it('books once for 50 concurrent requests with the same key', async () => {
    const { copy } = fixture;
    const schema = await fixture.schema('fastify', 'CREATE TABLE bookings (id serial PRIMARY KEY, room_id text NOT NULL, nights int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { buildApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { buildApp: () => FastifyInstance };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const app = buildApp();
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const request = { key: 'booking-91c2', user: 'guest-1', body: { roomId: 'room-12', nights: 3 } };
      const url = `${address}/bookings`;
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM bookings')).rows[0].n as number);
    } finally {
      await app.close();
      await db.end();
    }
  });
});
