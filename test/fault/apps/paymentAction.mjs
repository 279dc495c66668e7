/* global fetch */
// The action every fault-suite app runs, whatever its framework: record the execution, optionally stop at the
// test's barrier, write the local effect, charge the fake provider with the key the scaffold derives, optionally
// stop again, answer 201. Executions and effects go to their own tables through a direct pool (not through the
// fault proxy), so faults hit the idempotency store only and the test reads exact counts.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

// A CommonJS project require()s the scaffold (its profile's output), an ES module project imports it.
const load = (url) => (process.env.SCAFFOLD_FORMAT === 'commonjs' ? createRequire(import.meta.url)(fileURLToPath(url)) : import(url));
const scaffold = await load(process.env.SCAFFOLD_INDEX);
const providers = await load(process.env.SCAFFOLD_PROVIDERS);

/** The store's pool, as the generated README wires it (bounded waits), pointed at the proxy when there is one. */
export const storePool = scaffold.createPool(process.env.STORE_URL, scaffold.POLICY);
const recorder = new pg.Pool({ connectionString: process.env.RECORDER_URL, max: 4 });

export { scaffold };
export const principal = (headers) => {
  const user = headers['x-user'];
  return typeof user === 'string' && user !== '' ? user : undefined;
};

async function barrier(point, key) {
  const response = await fetch(`${process.env.BARRIER_URL}/${encodeURIComponent(point)}/${encodeURIComponent(key)}`, {
    headers: { 'x-worker': String(process.pid) },
  });
  if (!response.ok) throw new Error(`barrier answered ${response.status}`);
}

/**
 * Runs the action for a claimed key. `context` is idempotencyOf(request), the same shape in every adapter; `pause`
 * is the x-fault-pause header (before, after or absent).
 */
export async function pay({ context, pause, body }) {
  const { key } = context;
  const { idempotencyKey } = providers.stripeRequestOptions(context);
  await recorder.query('INSERT INTO fault_executions (key, scope, provider_key, worker) VALUES ($1, $2, $3, $4)', [
    key,
    context.scope,
    idempotencyKey,
    process.pid,
  ]);
  if (pause === 'before') await barrier('before', key);
  await recorder.query('INSERT INTO fault_effects (key, worker) VALUES ($1, $2)', [key, process.pid]);
  const charge = await fetch(`${process.env.PROVIDER_URL}/v1/charges`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    // A time parameter counts from context.startedAt, as apply writes it: a takeover sends the same parameters, so the
    // provider (which refuses a key reused with other parameters) answers from its cache instead of 400.
    body: JSON.stringify({
      amount: body.amount,
      currency: body.currency,
      destination: body.recipientId,
      expires_at: Math.floor(context.startedAt / 1000) + 3600,
    }),
  });
  if (!charge.ok) throw new Error(`provider answered ${charge.status}`);
  const { id } = await charge.json();
  if (pause === 'after') await barrier('after', key);
  // The nonce makes every execution's answer unique, so a replay that matches byte for byte is the recorded one.
  return { paymentId: `pay_${randomUUID()}`, charge: id, worker: process.pid };
}

export function announce(port) {
  process.stdout.write(`listening ${port}\n`);
}
