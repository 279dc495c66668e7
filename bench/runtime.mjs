// Runtime benchmark: the generated Express + PostgreSQL middleware against a bare handler and the idempotency peers
// that install on Node 20, each app in its own process, the load generator (autocannon) in another, all on loopback.
// Every handler does the same one INSERT into the same PostgreSQL. Paths: first request (new keys), replay of many
// keys, replay of one hot key, 10 concurrent duplicates per key. Reports req/s, p50/p99, what each request asks of
// PostgreSQL (counted on the wire in a separate short pass) and executions per key, so a fast but wrong contender
// shows. Appends the table to bench/results.md.
// --paths also prints each path's ratio to bare per contender (first request, replay, in-flight conflict) beside its target.
// Usage: npm run build && node bench/runtime.mjs [--assert] [--paths] [--seconds 2] [--rounds 2] [--connections 10] [--only bare,ours-lease]
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { startCounter } from './runtime/pgCounter.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : fallback;
};
const ASSERT = argv.includes('--assert');
const PER_PATH = argv.includes('--paths');
const SECONDS = Number(flag('--seconds', '2'));
const ROUNDS = Number(flag('--rounds', '2'));
const SEED_KEYS = 300;
const CONNECTIONS = Number(flag('--connections', '10'));
const COUNT_REQUESTS = 200;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_ID = `rbench-${randomUUID().slice(0, 8)}`;
const PATHS = ['first', 'replay-many', 'replay-hot', 'dup10'];
const PATH_LABELS = { first: 'first request', 'replay-many': 'replay (many keys)', 'replay-hot': 'replay (one hot key)', dup10: 'in-flight conflict (10 duplicates per key)' };
// Issue #20: req/s as a fraction of the bare handler's on the same path in the same run.
const TARGETS = [
  // "first request ≥ 0.8× bare (transactional mode) and ≥ 0.5× (lease mode); replay ≥ 0.9× bare over many keys and
  // ≥ 0.8× on one hot key".
  { contender: 'ours-transactional', path: 'first', min: 0.8 },
  { contender: 'ours-lease', path: 'first', min: 0.5 },
  ...['ours-transactional', 'ours-lease'].flatMap((contender) => [
    { contender, path: 'replay-many', min: 0.9 },
    { contender, path: 'replay-hot', min: 0.8 },
  ]),
];
const CONTENDERS = [
  { name: 'bare', store: 'none', exactlyOnce: false },
  { name: 'ours-transactional', store: 'PostgreSQL', exactlyOnce: true, ours: true },
  { name: 'ours-lease', store: 'PostgreSQL', exactlyOnce: true, ours: true },
  { name: 'express-idempotency', store: 'process memory', exactlyOnce: true },
  { name: 'node-idempotency', store: 'Redis', exactlyOnce: true, redis: true },
  { name: 'powertools', store: 'Redis', exactlyOnce: true, redis: true },
].filter((contender) => !flag('--only') || flag('--only').split(',').includes(contender.name));

// 1. The scaffolding for one transactional and one lease action on POST /effects, generated and compiled strictly.
const dist = (file) => pathToFileURL(path.join(ROOT, 'dist', file)).href;
const { parseConfig } = await import(dist('config/load.js')).catch(() => {
  console.error('bench: run `npm run build` first (dist/ is missing)');
  process.exit(2);
});
const { buildDesign } = await import(dist('model/index.js'));
const { generateScaffold } = await import(dist('scaffold/index.js'));
const raw = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8'));
const effect = { trigger: 'http', route: 'POST /effects', significantFields: ['amount', 'currency'], scope: 'user', expectedDurationMs: 100 };
raw.actions = [
  { ...effect, name: 'recordEffectTx', mode: 'transactional' },
  { ...effect, name: 'recordEffectLease', mode: 'lease' },
];
raw.payments = [];
const model = buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: new Date('2026-01-01T00:00:00Z') });
mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(path.join(ROOT, '.tmp', 'bench-runtime-'));
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
const scaffoldDir = path.join(dir, 'dist/idempotency');

// 2. A private schema: the generated migration plus the table every handler inserts into.
const schema = `idem_rbench_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const admin = new pg.Client({ connectionString: DATABASE_URL });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const withSchema = (url) => `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const db = new pg.Pool({ connectionString: withSchema(DATABASE_URL), max: 2 });
await db.query(readFileSync(path.join(dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8'));
await db.query('CREATE TABLE bench_effects (id bigserial PRIMARY KEY, contender text NOT NULL, key text NOT NULL)');
await db.query('CREATE INDEX ON bench_effects (contender, key)');
const pgVersion = (await db.query('SHOW server_version')).rows[0].server_version;
const redisUp = await import('@redis/client')
  .then(async ({ createClient }) => {
    const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 1_000, reconnectStrategy: false } });
    client.on('error', () => undefined);
    await client.connect();
    await client.quit();
    return true;
  })
  .catch(() => false);

/** Starts one contender's app; resolves with its URL and a stop(). */
async function startApp(contender, databaseUrl) {
  // BENCH_APP_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the apps; Node refuses it in NODE_OPTIONS.
  const nodeArgs = (process.env.BENCH_APP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bench/runtime/app.mjs')], {
    env: { ...process.env, CONTENDER: contender, DATABASE_URL: databaseUrl, SCAFFOLD_DIR: scaffoldDir, REDIS_URL, RUN_ID },
    // Some peers log every rejected duplicate with a stack trace; their stderr goes to a file in the bench folder.
    stdio: ['ignore', 'pipe', openSync(path.join(dir, `${contender}.stderr.log`), 'a')],
  });
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${contender} exited with ${code} before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    /** User + system CPU time the app process has used so far, in ms. */
    cpuMs: async () => {
      const usage = await (await globalThis.fetch(`http://127.0.0.1:${port}/cpu`)).json();
      return (usage.user + usage.system) / 1000;
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** Runs the load generator in its own process; `onSeeded` runs once the replay paths' keys exist, before measuring. */
function runLoad(options, onSeeded = () => undefined) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bench/runtime/load.mjs'), JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let result;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'SEEDED') {
        Promise.resolve(onSeeded()).then(() => child.stdin.write('go\n'), reject);
      } else if (line.startsWith('{')) result = JSON.parse(line);
    });
    child.once('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`load generator exited with ${code}`))));
  });
}

/** Handler executions per key for one contender and path (the effect table is the ground truth). */
async function executions(contender, prefixes) {
  const { rows } = await db.query(
    `SELECT count(*)::int AS keys, coalesce(max(n), 0)::int AS max, count(*) FILTER (WHERE n > 1)::int AS doubled
     FROM (SELECT key, count(*) AS n FROM bench_effects WHERE contender = $1 AND key LIKE ANY ($2) GROUP BY key) per_key`,
    [contender, prefixes.map((prefix) => `${prefix}-%`)],
  );
  return rows[0];
}

const results = [];
const loadBefore = os.loadavg()[0];
const started = Date.now();
const runnable = CONTENDERS.filter((contender) => {
  if (!contender.redis || redisUp) return true;
  console.log(`${contender.name}: not run (Redis at ${REDIS_URL} unreachable)`);
  for (const kind of PATHS) results.push({ contender, path: kind, skipped: 'Redis unreachable' });
  return false;
});
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

// Throughput pass: every app up at once, talking to PostgreSQL directly; the contenders take turns on each path,
// ROUNDS times, so a change in the machine's load (it is shared) hits all of them alike. Medians are reported.
const apps = new Map();
const measured = new Map();
try {
  for (const contender of runnable) apps.set(contender.name, await startApp(contender.name, withSchema(DATABASE_URL)));
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of PATHS) {
      for (const contender of runnable) {
        // Replay paths answer their keys once (round 0) and replay the same keys in every round.
        const replay = kind.startsWith('replay');
        const prefix = `${RUN_ID}-${contender.name}-${kind}${replay ? '' : `-r${round}`}`;
        const app = apps.get(contender.name);
        let cpuBefore = 0;
        const load = await runLoad({ url: app.url, path: kind, prefix, seconds: SECONDS, connections: CONNECTIONS, seedKeys: SEED_KEYS, seed: round === 0 }, async () => {
          cpuBefore = await app.cpuMs();
        });
        load.cpuMsPerRequest = ((await app.cpuMs()) - cpuBefore) / load.requests;
        const entry = measured.get(`${contender.name} ${kind}`) ?? { loads: [], prefixes: new Set() };
        entry.loads.push(load);
        entry.prefixes.add(prefix);
        measured.set(`${contender.name} ${kind}`, entry);
        console.log(`round ${round + 1} ${contender.name.padEnd(20)} ${kind.padEnd(12)} ${load.rps.toFixed(0).padStart(6)} req/s  p50 ${load.p50.toFixed(1)} ms  p99 ${load.p99.toFixed(1)} ms  ${JSON.stringify(load.statuses)}`);
      }
    }
  }
} finally {
  await Promise.all([...apps.values()].map((app) => app.stop()));
}

// Counting pass: each app again, through a counting proxy, a fixed number of requests per path.
for (const contender of runnable) {
  const counter = await startCounter({ host: new URL(DATABASE_URL).hostname, port: Number(new URL(DATABASE_URL).port || 5432) });
  const counted = await startApp(contender.name, withSchema(DATABASE_URL.replace(/@[^/]+\//, `@127.0.0.1:${counter.port}/`)));
  try {
    for (const kind of PATHS) {
      const prefix = `${RUN_ID}-${contender.name}-${kind}-count`;
      const load = await runLoad({ url: counted.url, path: kind, prefix, amount: COUNT_REQUESTS, connections: CONNECTIONS, seedKeys: 100, seed: true }, () => counter.take());
      const counts = counter.take();
      const per = (n) => n / load.requests;
      const { loads, prefixes } = measured.get(`${contender.name} ${kind}`);
      const executionsPerKey = await executions(contender.name, [...prefixes, prefix]);
      results.push({
        contender,
        path: kind,
        load: {
          rps: median(loads.map((one) => one.rps)),
          p50: median(loads.map((one) => one.p50)),
          p99: median(loads.map((one) => one.p99)),
          cpuMsPerRequest: median(loads.map((one) => one.cpuMsPerRequest)),
          statuses: loads.reduce((sum, one) => {
            for (const [code, n] of Object.entries(one.statuses)) sum[code] = (sum[code] ?? 0) + n;
            return sum;
          }, {}),
        },
        executions: executionsPerKey,
        wire: { roundTrips: per(counts.roundTrips), statements: per(counts.statements), commits: per(counts.commits) },
      });
    }
  } finally {
    await counted.stop();
    await counter.close();
  }
}
const loadAfter = os.loadavg()[0];

// 3. The table, the assertions, results.md.
const bareOf = (kind) => results.find((row) => row.contender.name === 'bare' && row.path === kind && row.load);
const fixed = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const lines = [
  '| path | contender | store | req/s | × bare | p50 ms | p99 ms | app CPU ms / req | round trips / req | statements / req | commits / req | executions per key | answers |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const kind of PATHS) {
  for (const row of results.filter((candidate) => candidate.path === kind)) {
    if (row.skipped) {
      lines.push(`| ${kind} | ${row.contender.name} | ${row.contender.store} | not run: ${row.skipped} | | | | | | | | | |`);
      continue;
    }
    const bare = bareOf(kind);
    const ratio = bare ? row.load.rps / bare.load.rps : NaN;
    const e = row.executions;
    const perKey = !row.contender.exactlyOnce ? `${e.max} max (no idempotency)` : e.doubled > 0 ? `**${e.doubled} keys ran more than once** (max ${e.max})` : `1 (${e.keys} keys)`;
    const answers = Object.entries(row.load.statuses).map(([code, n]) => `${code}×${n}`).join(' ');
    lines.push(`| ${kind} | ${row.contender.name} | ${row.contender.store} | ${fixed(row.load.rps, 0)} | ${fixed(ratio, 2)} | ${fixed(row.load.p50)} | ${fixed(row.load.p99)} | ${fixed(row.load.cpuMsPerRequest, 2)} | ${fixed(row.wire.roundTrips, 2)} | ${fixed(row.wire.statements, 2)} | ${fixed(row.wire.commits, 2)} | ${perKey} | ${answers} |`);
  }
}
const cpus = os.cpus();
const facts = `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, PostgreSQL ${pgVersion}, load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; medians of ${ROUNDS} interleaved rounds of ${SECONDS} s per path and contender at ${CONNECTIONS} connections (dup10: ${Math.max(1, Math.floor(CONNECTIONS / 10))} × 10 concurrent per key); wire counts over ${COUNT_REQUESTS} requests per path`;
const table = lines.join('\n');
console.log(`\n${table}\n\n${facts}`);

const ratioOf = (contender, kind) => {
  const row = results.find((candidate) => candidate.contender.name === contender && candidate.path === kind && candidate.load);
  const bare = bareOf(kind);
  return row && bare ? row.load.rps / bare.load.rps : undefined;
};
const failures = [];
for (const { contender, path: kind, min } of TARGETS) {
  const ratio = ratioOf(contender, kind);
  if (ratio !== undefined && ratio < min) failures.push(`${contender} ${kind}: ${ratio.toFixed(2)}× bare, target ≥ ${min}×`);
}
let perPath = '';
if (PER_PATH) {
  const others = runnable.filter((contender) => contender.name !== 'bare');
  const rows = [
    `| path | ${others.map((contender) => contender.name).join(' | ')} |`,
    `|---|${others.map(() => '---|').join('')}`,
    ...PATHS.map((kind) => {
      const cells = others.map((contender) => {
        const ratio = ratioOf(contender.name, kind);
        const goal = TARGETS.find((one) => one.contender === contender.name && one.path === kind);
        return `${fixed(ratio ?? NaN, 2)}×${goal ? ` (target ≥ ${goal.min}×)` : ''}`;
      });
      return `| ${PATH_LABELS[kind]} | ${cells.join(' | ')} |`;
    }),
  ];
  perPath = `Per path, req/s × bare in this run:\n\n${rows.join('\n')}`;
  console.log(`\n${perPath}`);
}
for (const row of results.filter((candidate) => candidate.contender.ours && candidate.executions?.doubled > 0))
  failures.push(`${row.contender.name} ${row.path}: ${row.executions.doubled} keys executed more than once`);
for (const row of results.filter((candidate) => candidate.contender.ours && candidate.load?.statuses['500'] + (candidate.load?.statuses['503'] ?? 0) > 0))
  failures.push(`${row.contender.name} ${row.path}: 5xx answers ${JSON.stringify(row.load.statuses)}`);

const resultsFile = path.join(ROOT, 'bench/results.md');
if (!existsSync(resultsFile)) writeFileSync(resultsFile, '# Benchmark results\n\nAppended by the benchmarks in this folder, newest last, each with the machine it ran on.\n');
appendFileSync(
  resultsFile,
  `\n## Runtime benchmark, ${new Date().toISOString()}\n\n\`node bench/runtime.mjs ${argv.join(' ')}\`, run ${RUN_ID}, ${((Date.now() - started) / 1000).toFixed(0)} s. ${facts}.\n\n${table}\n\n${perPath ? `${perPath}\n\n` : ''}${failures.length ? `Targets missed:\n${failures.map((failure) => `- ${failure}`).join('\n')}` : 'All targets met.'}\n`,
);
console.log(failures.length ? `\ntargets missed:\n${failures.join('\n')}` : '\nall targets met');

await db.end();
await admin.query(`DROP SCHEMA ${schema} CASCADE`);
await admin.end();
rmSync(dir, { recursive: true, force: true });
if (ASSERT && failures.length) process.exitCode = 1;
