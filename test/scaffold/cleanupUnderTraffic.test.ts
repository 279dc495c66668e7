import { rm } from 'node:fs/promises';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, listen, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`cleanup test skipped: ${skip}`);

describe.skipIf(skip !== undefined)('cleanup job under traffic', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Loose;
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('express-stripe-payments'), 'cleanup');
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'cleanup');
    scaffold = await loadScaffold(generated);
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (req: express.Request) => req.header('x-user') });
    const app = express();
    app.use(express.json());
    app.post('/payments', idempotency.createPayment, async (_req: express.Request, res: express.Response) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.status(201).json({ ok: true });
    });
    server = await listen(app);
  });

  afterAll(async () => {
    await server?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  it('deletes only expired, non-live rows while requests keep claiming and completing keys', async () => {
    const seed = (where: string, count: number, status: string, lockedUntil: string, expires: string) =>
      schema.pool.query(
        `INSERT INTO idempotency_store (scope, key, action, fingerprint, fingerprint_alg, status, locked_until, response_status, response_body, expires_at)
         SELECT 'seed', '${where}-' || i, 'createPayment', repeat('a', 64), 'sha256-canonical-json-v1', '${status}', ${lockedUntil},
                ${status === 'PROCESSING' ? 'NULL' : '201'}, ${status === 'PROCESSING' ? 'NULL' : "'x'::bytea"}, ${expires}
         FROM generate_series(1, ${count}) AS i`,
      );
    await seed('expired-done', 2_500, 'COMPLETED', 'NULL', "now() - interval '1 minute'");
    await seed('expired-failed', 300, 'FAILED', 'NULL', "now() - interval '1 minute'");
    await seed('abandoned', 200, 'PROCESSING', "now() - interval '1 minute'", "now() - interval '1 minute'");
    await seed('live-done', 1_000, 'COMPLETED', 'NULL', "now() + interval '1 day'");
    // Still running past its retention (a long action): its lease is live, so it must survive.
    await seed('live-inflight', 100, 'PROCESSING', "now() + interval '1 hour'", "now() - interval '1 minute'");

    let stop = false;
    const statuses: number[] = [];
    const sentKeys = new Set<string>();
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, (_, j) => {
            sentKeys.add(`traffic-${i}-${j % 5}`);
            return fetch(`${server.url}/payments`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'idempotency-key': `traffic-${i}-${j % 5}`, 'x-user': 'usr_1' },
              body: JSON.stringify({ amount: i, currency: 'EUR', recipientId: 'acct_1' }),
            }).then((response) => response.status);
          }),
        );
        statuses.push(...batch);
      }
    })();

    const result = await scaffold.deleteExpiredKeys({ pool: schema.pool, table: 'idempotency_store', batchSize: 250 });
    stop = true;
    await traffic;

    expect(result.deleted).toBe(3_000);
    expect(result.batches).toBeGreaterThan(1);
    const { rows } = await schema.pool.query<{ prefix: string; n: number }>(
      "SELECT split_part(key, '-', 1) || '-' || split_part(key, '-', 2) AS prefix, count(*)::int AS n FROM idempotency_store WHERE scope = 'seed' GROUP BY 1 ORDER BY 1",
    );
    expect(rows).toEqual([
      { prefix: 'live-done', n: 1_000 },
      { prefix: 'live-inflight', n: 100 },
    ]);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
    // Every key the traffic created is still there (cleanup never touched a fresh record).
    const trafficRows = await schema.pool.query("SELECT count(*)::int AS n FROM idempotency_store WHERE scope = 'usr_1' AND status = 'COMPLETED'");
    expect(trafficRows.rows[0].n).toBe(sentKeys.size);
  });
});
