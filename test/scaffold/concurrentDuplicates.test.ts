import { rm } from 'node:fs/promises';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, listen, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`concurrent-duplicate test skipped: ${skip}`);

describe.skipIf(skip !== undefined)('50 concurrent requests with one key (Express app on the generated middleware)', () => {
  let generated: Generated;
  let schema: Schema;
  let server: Awaited<ReturnType<typeof listen>>;
  let executions = 0;

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('express-stripe-payments'), 'concurrent');
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'concurrent');
    const scaffold: Loose = await loadScaffold(generated);
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (req: express.Request) => req.header('x-user') });
    const app = express();
    app.use(express.json());
    app.post('/payments', idempotency.createPayment, async (req: express.Request, res: express.Response) => {
      executions += 1;
      await new Promise((resolve) => setTimeout(resolve, 150)); // long enough that every duplicate arrives mid-flight
      res.status(201).json({ paymentId: `pay_${executions}`, amount: req.body.amount });
    });
    server = await listen(app);
  });

  afterAll(async () => {
    await server?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  it('runs the action once; every other request gets 409 with Retry-After or the replay; none gets a 5xx', async () => {
    const send = () =>
      fetch(`${server.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': '"7c0a5b1e-concurrent"', 'x-user': 'usr_1' },
        body: JSON.stringify({ amount: 4999, currency: 'EUR', recipientId: 'acct_xyz', note: 'ignored' }),
      });
    const responses = await Promise.all(Array.from({ length: 50 }, send));
    const statuses = responses.map((response) => response.status);
    expect(executions).toBe(1);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    for (const response of responses.filter((r) => r.status === 409)) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);

    const bodies = await Promise.all(responses.filter((r) => r.status === 201).map((r) => r.text()));
    expect(new Set(bodies).size).toBe(1);

    // Afterwards the same request replays the recorded bytes, still without running again.
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(bodies[0]);
    expect(executions).toBe(1);
    const { rows } = await schema.pool.query('SELECT status, fencing_token FROM idempotency_store');
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('COMPLETED');
  });

  it('rejects missing, empty, over-long and control-character keys with 400 problem+json', async () => {
    // A tab is the one control character HTTP clients let through in a header value.
    for (const key of [undefined, '', '""', 'a'.repeat(256), 'bad\tkey']) {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-user': 'usr_1' };
      if (key !== undefined) headers['idempotency-key'] = key;
      const response = await fetch(`${server.url}/payments`, { method: 'POST', headers, body: '{}' });
      expect(response.status, JSON.stringify(key)).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(executions).toBe(1);
  });
});
