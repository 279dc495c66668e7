// The load generator of the runtime benchmark, in its own process (never the server's): one path against one app.
// Usage: node bench/runtime/load.mjs '<json>' with { url, path, prefix, seconds?, amount?, connections, seedKeys?,
// seed? (false: the replay keys were answered by an earlier run) }.
// Paths: first (a new key per request), replay-many (seedKeys keys answered once, then replayed round-robin),
// replay-hot (one key answered once, then replayed), dup10 (waves of 10 concurrent requests per new key).
// Prints one JSON line: { requests, seconds, rps, p50, p99, statuses }.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
const { url, path: kind, prefix, connections = 10, seedKeys = 1000 } = options;
const BODY = JSON.stringify({ amount: 1250, currency: 'eur' });
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(connections, 10) });

/** One POST with an Idempotency-Key, on the keep-alive agent; resolves with its status and latency. */
function send(key) {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request(
      `${url}/effects`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), 'idempotency-key': key } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode, ms: performance.now() - started }));
      },
    );
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    request.end(BODY);
  });
}

/** Sends every key once, `connections` at a time (the answers the replay paths then replay). */
async function seed(keys) {
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < keys.length) await send(keys[next++]);
    }),
  );
}

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0);

async function withAutocannon(nextKey) {
  const result = await autocannon({
    url,
    connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds }),
    requests: [
      {
        method: 'POST',
        path: '/effects',
        setupRequest: (request) => ({ ...request, headers: { 'content-type': 'application/json', 'idempotency-key': nextKey() }, body: BODY }),
      },
    ],
  });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count]));
  if (result.errors || result.timeouts) statuses.error = (result.errors ?? 0) + (result.timeouts ?? 0);
  const requests = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return { requests, seconds: result.duration, rps: requests / result.duration, p50: result.latency.p50, p99: result.latency.p99, statuses };
}

/** dup10: each wave is one new key sent by 10 concurrent requests; `connections / 10` waves run side by side. */
async function duplicates() {
  const latencies = [];
  const statuses = {};
  let key = 0;
  let sent = 0;
  const started = performance.now();
  const stopAt = started + (options.seconds ?? 0) * 1000;
  const done = () => (options.amount ? sent >= options.amount : performance.now() >= stopAt);
  await Promise.all(
    Array.from({ length: Math.max(1, Math.floor(connections / 10)) }, async () => {
      while (!done()) {
        const k = `${prefix}-${key++}`;
        sent += 10;
        for (const answer of await Promise.all(Array.from({ length: 10 }, () => send(k)))) {
          latencies.push(answer.ms);
          statuses[answer.status || 'error'] = (statuses[answer.status || 'error'] ?? 0) + 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses };
}

/** Tells the orchestrator the keys to replay exist, and waits for its go (it resets the wire counters then). */
async function seeded() {
  console.log('SEEDED');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
}

let result;
if (kind === 'first') {
  await seeded();
  let i = 0;
  result = await withAutocannon(() => `${prefix}-${i++}`);
} else if (kind === 'replay-many') {
  const keys = Array.from({ length: seedKeys }, (_, i) => `${prefix}-${i}`);
  if (options.seed !== false) await seed(keys);
  await seeded();
  let i = 0;
  result = await withAutocannon(() => keys[i++ % keys.length]);
} else if (kind === 'replay-hot') {
  if (options.seed !== false) await seed([`${prefix}-hot`]);
  await seeded();
  result = await withAutocannon(() => `${prefix}-hot`);
} else if (kind === 'dup10') {
  await seeded();
  result = await duplicates();
} else {
  console.error(`unknown path ${kind}`);
  process.exit(2);
}
agent.destroy();
console.log(JSON.stringify(result));
