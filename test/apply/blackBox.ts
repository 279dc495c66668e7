import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { DATABASE_URL } from '../scaffold/harness.js';

export interface AppSchema {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A throwaway schema with the store's migration and the app's own table, so parallel suites never share rows. */
export async function createAppSchema(label: string, migration: string, appDdl: string): Promise<AppSchema> {
  const name = `idem_apply_${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.end();
  const url = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${name}`)}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  await pool.query(migration);
  await pool.query(appDdl);
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await client.end();
    },
  };
}

/** Answers like Stripe's PaymentIntents endpoint and remembers each request's Idempotency-Key. */
export async function fakeStripe(): Promise<{ base: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const server: Server = createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key'] ?? ''));
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_test' });
      res.end(JSON.stringify({ id: `pi_${keys.length}`, object: 'payment_intent', status: 'requires_payment_method' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface Burst {
  statuses: number[];
  bodies: string[];
}

/** `count` identical requests (same key, same body, same user) released together. */
export async function burst(url: string, count: number, init: { key: string; user: string; body: unknown }): Promise<Burst> {
  const responses = await Promise.all(
    Array.from({ length: count }, () =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': init.key, 'x-user-id': init.user },
        body: JSON.stringify(init.body),
      }).then(async (res) => ({ status: res.status, body: await res.text() })),
    ),
  );
  return { statuses: responses.map((r) => r.status), bodies: responses.map((r) => r.body) };
}
