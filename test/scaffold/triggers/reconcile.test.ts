import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Generated } from '../generateInto.js';
import { createSchema, listen, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';
import { eventually } from './services.js';

const run = promisify(execFile);

/**
 * Issue #18's reconciliation acceptance: a local fake Stripe (create with Idempotency-Key, Search API on metadata)
 * records every call. Two payments get stuck PROCESSING: one died after Stripe charged, one before. The generated
 * job (run as its own process, first with --dry-run) completes the first from Stripe and releases the second; the
 * clients' retries then replay the first and run the second once. Stripe is asked to create exactly once per payment.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`reconciliation acceptance skipped: ${skip}`);

interface FakeStripe {
  url: string;
  creates: Array<{ idempotencyKey: string; hash: string }>;
  searches: string[];
  objects: Map<string, { id: string; status: string; hash: string }>;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Just enough Stripe: idempotent PaymentIntent create and metadata search, with every call recorded. */
async function startFakeStripe(): Promise<FakeStripe> {
  const fake: Omit<FakeStripe, 'url' | 'close'> = { creates: [], searches: [], objects: new Map() };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    response.setHeader('content-type', 'application/json');
    if (request.method === 'POST' && url.pathname === '/v1/payment_intents') {
      const form = new URLSearchParams(await body(request));
      const idempotencyKey = String(request.headers['idempotency-key'] ?? '');
      const hash = form.get('metadata[idempotency_key_hash]') ?? '';
      fake.creates.push({ idempotencyKey, hash });
      let object = fake.objects.get(idempotencyKey);
      if (!object) fake.objects.set(idempotencyKey, (object = { id: `pi_${fake.objects.size + 1}`, status: 'succeeded', hash }));
      response.end(JSON.stringify({ id: object.id, status: object.status }));
      return;
    }
    if (request.method === 'GET' && url.pathname === '/v1/payment_intents/search') {
      const query = url.searchParams.get('query') ?? '';
      fake.searches.push(query);
      const hash = /metadata\['idempotency_key_hash'\]:'([0-9a-f]+)'/.exec(query)?.[1];
      const data = [...fake.objects.values()].filter((object) => object.hash === hash).map(({ id, status }) => ({ id, status }));
      response.end(JSON.stringify({ object: 'search_result', data }));
      return;
    }
    response.statusCode = 404;
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...fake,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(skip !== undefined)('reconciliation job against a fake Stripe', () => {
  let generated: Generated;
  let schema: Schema;
  let stripe: FakeStripe;
  let scaffold: Record<string, Loose>;

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await triggersModel());
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'reconcile');
    stripe = await startFakeStripe();
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    scaffold = { ...(await load('index.js')), ...(await load('providers.js')) };
  });

  afterAll(async () => {
    await stripe?.close();
    await schema?.drop();
  });

  const job = (...args: string[]) =>
    run(process.execPath, [path.join(generated.outDir, 'reconcile/job.js'), ...args], {
      env: { ...process.env, DATABASE_URL: schema.url, STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_API_BASE: stripe.url, RECONCILE_MIN_STUCK_MS: '0' },
    });

  const records = async () =>
    (await schema.pool.query("SELECT key, status, response_status FROM idempotency_store WHERE action = 'createPayment' ORDER BY key")).rows;

  it('stuck payments are completed from Stripe or released, and no payment is charged twice', async () => {
    const idempotency = scaffold.createIdempotency({ pool: schema.pool, principal: (req: Loose) => req.header('x-user') });
    const hanging: Array<() => void> = [];
    const app = express();
    app.use(express.json());
    app.post('/payments', idempotency.createPayment, async (req: Loose, res: Loose) => {
      const context = scaffold.idempotencyOf(req);
      const crash = req.header('x-crash');
      if (crash === 'before-charge') return new Promise<void>((resolve) => hanging.push(resolve));
      const form = new URLSearchParams({ amount: String(req.body.amount), currency: req.body.currency, 'metadata[idempotency_key_hash]': scaffold.stripeMetadata(context).idempotency_key_hash });
      const charge = await fetch(`${stripe.url}/v1/payment_intents`, { method: 'POST', headers: { 'idempotency-key': scaffold.stripeRequestOptions(context).idempotencyKey, 'content-type': 'application/x-www-form-urlencoded' }, body: form });
      const intent = await charge.json();
      // The worker "dies" after Stripe charged and before the record is completed.
      if (crash === 'after-charge') return new Promise<void>((resolve) => hanging.push(resolve));
      res.status(201).json({ paymentIntent: intent.id });
    });
    const server = await listen(app);
    const pay = (key: string, crash?: string, signal?: AbortSignal) =>
      fetch(`${server.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-user': 'usr_1', ...(crash ? { 'x-crash': crash } : {}) },
        body: JSON.stringify({ amount: 4999, currency: 'EUR', recipientId: 'acct_1' }),
        signal,
      });
    try {
      const abort = new AbortController();
      const stuck = [pay('pay-charged', 'after-charge', abort.signal).catch(() => 'aborted'), pay('pay-never', 'before-charge', abort.signal).catch(() => 'aborted')];
      await eventually('both workers stuck mid-action', async () => (hanging.length === 2 ? true : undefined));
      abort.abort();
      await Promise.all(stuck);
      // Their leases lapse (the workers are gone).
      await schema.pool.query("UPDATE idempotency_store SET locked_until = now() - interval '1 minute' WHERE action = 'createPayment'");
      expect(stripe.creates).toHaveLength(1);

      const dry = await job('--dry-run');
      expect(dry.stdout).toContain('dry run: nothing written');
      expect(await records()).toEqual([
        { key: 'pay-charged', status: 'PROCESSING', response_status: null },
        { key: 'pay-never', status: 'PROCESSING', response_status: null },
      ]);

      const real = await job();
      const outcomes = real.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { key: string; outcome: string });
      expect(outcomes.map(({ key, outcome }) => [key, outcome]).sort()).toEqual([['pay-charged', 'completed'], ['pay-never', 'released']]);
      expect(stripe.searches.length).toBe(4);
      expect(stripe.creates).toHaveLength(1);

      const replay = await pay('pay-charged');
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toMatchObject({ reconciled: true, id: 'pi_1' });
      const rerun = await pay('pay-never');
      expect(rerun.status).toBe(201);
      expect(stripe.creates).toHaveLength(2);
      expect(new Set(stripe.creates.map((call) => call.idempotencyKey)).size).toBe(2);
      expect(stripe.objects.size).toBe(2);
      expect((await records()).map((row: { status: string }) => row.status)).toEqual(['COMPLETED', 'COMPLETED']);
    } finally {
      for (const resolve of hanging) resolve();
      await server.close();
    }
  });
});
