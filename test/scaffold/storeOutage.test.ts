import { rm } from 'node:fs/promises';
import net from 'node:net';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { listen, loadScaffold, type Loose } from './harness.js';

/**
 * The store stops answering: a TCP port that accepts connections and never replies (a partition or a hung
 * server), which is worse than a refused connection because nothing ever errors on its own. The shared PostgreSQL
 * is never stopped. No skip here: this test needs no database.
 */
describe('PostgreSQL unavailable', () => {
  let generated: Generated;
  let blackHole: net.Server;
  const sockets: net.Socket[] = [];
  let scaffold: Loose;
  let timeoutMs = 0;
  let executions = 0;

  beforeAll(async () => {
    generated = await generateAndCompile(await modelFor('express-stripe-payments'), 'outage');
    expect(generated.tscOutput).toBe('');
    scaffold = await loadScaffold(generated);
    timeoutMs = scaffold.POLICY.storeTimeoutMs;
    blackHole = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackHole?.close(resolve));
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const port = () => (blackHole.address() as net.AddressInfo).port;

  async function appWith(pool: pg.Pool) {
    const idempotency = scaffold.createIdempotency({ pool, principal: () => 'usr_1' });
    const app = express();
    app.use(express.json());
    app.post('/payments', idempotency.createPayment, (_req: express.Request, res: express.Response) => {
      executions += 1;
      res.status(201).json({ ok: true });
    });
    return listen(app);
  }

  async function expectFailClosed(pool: pg.Pool) {
    const server = await appWith(pool);
    try {
      const started = performance.now();
      const responses = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          fetch(`${server.url}/payments`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': `outage-${i}` },
            body: JSON.stringify({ amount: 1, currency: 'EUR', recipientId: 'acct_1' }),
            signal: AbortSignal.timeout(timeoutMs * 4),
          }),
        ),
      );
      const elapsed = performance.now() - started;
      for (const response of responses) {
        expect(response.status).toBe(503);
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
      expect(elapsed).toBeLessThan(timeoutMs + 1_000);
      expect(executions).toBe(0);
    } finally {
      await server.close();
    }
  }

  it('answers 503 + Retry-After within the configured time-out with the generated pool', async () => {
    const pool = scaffold.createPool(`postgres://postgres@127.0.0.1:${port()}/test`, timeoutMs);
    await expectFailClosed(pool);
    void pool.end().catch(() => undefined);
  });

  it('still answers in time with an application pool that has no time-outs of its own', async () => {
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port()}/test` });
    pool.on('error', () => undefined);
    await expectFailClosed(pool);
    void pool.end().catch(() => undefined);
  });
});
