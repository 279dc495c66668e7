import { spawn, type ChildProcess } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`crash-recovery test skipped: ${skip}`);

// Shortened from the design's lease so the test waits ~2 s instead of ~6 s; the mechanism is the same.
const LEASE_MS = 2_000;

/** A separate Node process serving the generated middleware; its handler announces itself, then works for holdMs. */
const WORKER = `
import express from 'express';
import pg from 'pg';
const [indexUrl, holdMs] = process.argv.slice(2);
const { createIdempotency } = await import(indexUrl);
const pool = new pg.Pool({ connectionString: process.env.SCHEMA_URL });
const idempotency = createIdempotency({ pool, principal: (req) => req.header('x-user') });
const app = express();
app.use(express.json());
app.post('/payments', idempotency.createPayment, async (req, res) => {
  console.log('started');
  await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
  await pool.query('INSERT INTO effects (worker) VALUES ($1)', [process.pid]);
  res.status(201).json({ worker: process.pid });
});
const server = app.listen(0, () => console.log('listening ' + server.address().port));
`;

interface Worker {
  child: ChildProcess;
  url: string;
  started: Promise<void>;
}

describe.skipIf(skip !== undefined)('a worker dies mid-action', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Loose;
  const workers: ChildProcess[] = [];

  async function startWorker(holdMs: number): Promise<Worker> {
    const child = spawn(process.execPath, [path.join(generated.dir, 'worker.mjs'), pathToFileURL(path.join(generated.outDir, 'index.js')).href, String(holdMs)], {
      env: { ...process.env, SCHEMA_URL: schema.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    workers.push(child);
    let onStarted = () => {};
    const started = new Promise<void>((resolve) => (onStarted = resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
      child.stdout!.setEncoding('utf8').on('data', (text: string) => {
        const port = /listening (\d+)/.exec(text)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}`);
        if (text.includes('started')) onStarted();
      });
    });
    return { child, url, started };
  }

  const pay = (url: string, key: string) =>
    fetch(`${url}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-user': 'usr_1' },
      body: JSON.stringify({ amount: 4999, currency: 'EUR', recipientId: 'acct_xyz' }),
    });

  beforeAll(async () => {
    const model = await modelFor('express-stripe-payments');
    for (const action of model.actions) {
      action.lockTimeoutMs = LEASE_MS;
      action.heartbeatMs = undefined;
    }
    generated = await generateAndCompile(model, 'crash');
    expect(generated.tscOutput).toBe('');
    await writeFile(path.join(generated.dir, 'worker.mjs'), WORKER);
    schema = await createSchema(generated, 'crash');
    await schema.pool.query('CREATE TABLE effects (id serial PRIMARY KEY, worker int NOT NULL)');
    scaffold = await loadScaffold(generated);
  });

  afterAll(async () => {
    for (const child of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  it('SIGKILL: 409 while the lease is live, then the retry completes exactly once and the dead owner is fenced out', async () => {
    await schema.pool.query('TRUNCATE effects');
    // Both processes are up before the claim: starting Node on a loaded machine can take longer than the lease.
    const survivor = await startWorker(50);
    const doomed = await startWorker(30_000);
    const pending = pay(doomed.url, 'key-sigkill').catch(() => 'connection lost');
    await doomed.started;
    const { rows: before } = await schema.pool.query("SELECT scope, key, action, fencing_token::text AS token FROM idempotency_store WHERE key = 'key-sigkill'");
    doomed.child.kill('SIGKILL');
    expect(await pending).toBe('connection lost');

    const early = await pay(survivor.url, 'key-sigkill');
    expect(early.status).toBe(409);
    expect(early.headers.get('retry-after')).not.toBeNull();

    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));
    const retry = await pay(survivor.url, 'key-sigkill');
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ worker: survivor.child.pid });
    const replay = await pay(survivor.url, 'key-sigkill');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await schema.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0].n).toBe(1);

    // The killed worker's token can no longer write: its late completion matches no row.
    const store = new scaffold.PgIdempotencyStore({ pool: schema.pool, table: 'idempotency_store', stepTable: 'idempotency_saga_steps', timeoutMs: 2_000 });
    const late = await store.complete(before[0], 'COMPLETED', { status: 200, headers: {}, body: Buffer.from('late') }, 60_000);
    expect(late).toBe(false);
    const { rows } = await schema.pool.query("SELECT response_status, convert_from(response_body, 'UTF8') AS body FROM idempotency_store WHERE key = 'key-sigkill'");
    expect(rows[0]).toEqual({ response_status: 201, body: JSON.stringify({ worker: survivor.child.pid }) });
  });

  it('SIGSTOP past the lease, then SIGCONT: the paused owner finishes late and its write is rejected', async () => {
    const paused = await startWorker(300);
    const pending = pay(paused.url, 'key-sigstop');
    await paused.started;
    paused.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));

    const survivor = await startWorker(50);
    const retry = await pay(survivor.url, 'key-sigstop');
    expect(retry.status).toBe(201);
    const winner = await retry.text();

    paused.child.kill('SIGCONT');
    const late = await pending;
    expect(late.status).toBe(409); // lease lost: its result was not recorded, so it is not presented as final
    expect(late.headers.get('content-type')).toContain('application/problem+json');
    const replay = await pay(survivor.url, 'key-sigstop');
    expect(await replay.text()).toBe(winner);
  });
});
