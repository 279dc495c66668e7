// Benchmark of the generated Express + PostgreSQL idempotency layer against the bare handler, in one run.
// Reports requests/s, p50/p99 latency and database round trips per request for: the bare handler, first
// requests (new key: claim + complete), and replays (same key: one claim statement answers).
// Usage: npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/scaffold.mjs [requests] [concurrency]
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import express from 'express';
import pg from 'pg';
import { startCounter } from './runtime/pgCounter.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// `npm run bench -- --flag` hands every bench the same flags; this one takes only positional numbers.
const [requestsArg, concurrencyArg] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const REQUESTS = Number(requestsArg ?? 3000);
const CONCURRENCY = Number(concurrencyArg ?? 16);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const { parseConfig } = await import(pathToFileURL(path.join(ROOT, 'dist/config/load.js')).href).catch(() => {
  console.error('bench: run `npm run build` first (dist/ is missing)');
  process.exit(2);
});
const { buildDesign } = await import(pathToFileURL(path.join(ROOT, 'dist/model/index.js')).href);
const { generateScaffold } = await import(pathToFileURL(path.join(ROOT, 'dist/scaffold/index.js')).href);

// 1. Generate and compile the scaffolding for the reference fixture.
const config = parseConfig(readFileSync(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8'));
const model = buildDesign(config, undefined, { now: new Date('2026-01-01T00:00:00Z') });
mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(path.join(ROOT, '.tmp', 'bench-'));
for (const file of generateScaffold(model, { dir: 'src/idempotency' })) {
  mkdirSync(path.dirname(path.join(dir, file.path)), { recursive: true });
  writeFileSync(path.join(dir, file.path), file.contents);
}
writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
writeFileSync(
  path.join(dir, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: 'src', types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')] },
    include: ['src'],
    exclude: ['src/**/*.test.ts'],
  }),
);
execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { stdio: 'inherit' });
const scaffold = await import(pathToFileURL(path.join(dir, 'dist/idempotency/index.js')).href);

// 2. A private schema with the generated migration, and the pool the scaffold tells users to make (createPool with
// POLICY: statement_timeout and lock_timeout as session parameters, so a lease claim is one autocommit statement).
// The store checks out a client per call (pool.connect), so round trips are counted on the wire: a second app on a
// pool through the loopback counter of bench/runtime/pgCounter.mjs, used only in a counting pass after each timed
// run (forwarding costs CPU, so throughput is never measured through it).
const schema = `idem_bench_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const withSchema = (url) => `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const admin = new pg.Client({ connectionString: DATABASE_URL });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const pool = scaffold.createPool(withSchema(DATABASE_URL), scaffold.POLICY, CONCURRENCY + 4);
await pool.query(readFileSync(path.join(dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8'));
const target = new URL(DATABASE_URL);
const counter = await startCounter({ host: target.hostname, port: Number(target.port || 5432) });
const countedPool = scaffold.createPool(withSchema(DATABASE_URL.replace(/@[^/]+\//, `@127.0.0.1:${counter.port}/`)), scaffold.POLICY, 4);
const COUNT_REQUESTS = Math.min(REQUESTS, 300);

const handler = (req, res) => res.status(201).json({ id: 'pay_1', amount: req.body.amount, currency: req.body.currency });
async function listen(storePool) {
  const idempotency = scaffold.createIdempotency({ pool: storePool, principal: () => 'usr_bench' });
  const app = express();
  app.use(express.json());
  app.post('/bare', handler);
  app.post('/payments', idempotency.createPayment, handler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}
const server = await listen(pool);
const countedServer = await listen(countedPool);
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const body = JSON.stringify({ amount: 4999, currency: 'EUR', recipientId: 'acct_xyz' });

function post(pathname, key, port = server.address().port) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (key) headers['idempotency-key'] = key;
    const started = process.hrtime.bigint();
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode >= 500 ? reject(new Error(`status ${res.statusCode}`)) : resolve(Number(process.hrtime.bigint() - started) / 1e6)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function scenario(name, pathname, keyFor) {
  for (let i = 0; i < 200; i++) await post(pathname, keyFor(`warm-${i}`)); // warm up JIT, pool and prepared statements
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) latencies.push(await post(pathname, keyFor(String(next++))));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  // Counting pass: the same requests, one at a time, through the counted app.
  const countedPort = countedServer.address().port;
  await post(pathname, keyFor('count-warm'), countedPort);
  counter.take();
  for (let i = 0; i < COUNT_REQUESTS; i++) await post(pathname, keyFor(`count-${i}`), countedPort);
  const roundTrips = counter.take().roundTrips;
  return { scenario: name, 'req/s': Math.round(REQUESTS / seconds), 'p50 ms': pct(50), 'p99 ms': pct(99), 'DB round trips/req': (roundTrips / COUNT_REQUESTS).toFixed(2) };
}

const replayKey = randomUUID();
await post('/payments', replayKey); // the one execution every replay answers from
const results = [
  await scenario('bare handler', '/bare', () => undefined),
  await scenario('first request (new key)', '/payments', (i) => `first-${i}-${randomUUID()}`),
  await scenario('replay (same key)', '/payments', () => replayKey),
];
console.log(`\n${REQUESTS} requests per scenario, concurrency ${CONCURRENCY}, PostgreSQL ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
console.table(results);
console.log('targets: replay 1 round trip, first request 2');

server.close();
countedServer.close();
agent.destroy();
await pool.end();
await countedPool.end();
await counter.close();
await admin.query(`DROP SCHEMA ${schema} CASCADE`);
await admin.end();
rmSync(dir, { recursive: true, force: true });
