// Benchmark: CLI cold start as ratios to `node -e 0` measured in the same run (so a slow or busy machine cancels
// out). Targets: `--help` ≤ 3×, a full `generate` ≤ 10×. Needs `npm run build` first (runs bin/ → dist/).
// BENCH_ROUNDS (default 7) rounds, each timing every command once, interleaved so load spikes hit all alike.
// `--json` prints machine-readable results; `--assert` exits 1 when a target is missed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/idempotency-builder.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const FIXTURE = process.env.BENCH_FIXTURE ?? 'express-stripe-payments';
const json = process.argv.includes('--json');
const assert = process.argv.includes('--assert');

const work = mkdtempSync(path.join(tmpdir(), 'ib-bench-cli-'));
const config = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/configs', `${FIXTURE}.json`), 'utf8'));
delete config.$schema;
/** A project holding only the config, as a user has it before the first `generate`. */
const freshProject = (name) => {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'idempotency.config.json'), `${JSON.stringify(config, null, 2)}\n`);
  return dir;
};

const env = { ...process.env, NO_COLOR: '1', CI: '1', SOURCE_DATE_EPOCH: '' };
function time(args) {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}:\n${run.stderr}`);
  return ms;
}

const steady = freshProject('steady');
time([BIN, 'generate', '--cwd', steady, '--date', '2026-12-02', '--quiet']);

const cases = {
  'node -e 0': () => ['-e', '0'],
  '--help': () => [BIN, '--help'],
  'generate (first run)': (round) => [BIN, 'generate', '--cwd', freshProject(`fresh-${round}`), '--date', '2026-12-02', '--quiet'],
  'generate (unchanged rerun)': () => [BIN, 'generate', '--cwd', steady, '--quiet'],
  'generate --check': () => [BIN, 'generate', '--cwd', steady, '--check', '--quiet'],
};
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
time(['-e', '0']); // Warm the node binary itself.
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, args] of Object.entries(cases)) samples[name].push(time(args(round)));
}
rmSync(work, { recursive: true, force: true });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const baseline = median(samples['node -e 0']);
const TARGETS = { '--help': 3, 'generate (first run)': 10, 'generate (unchanged rerun)': 10, 'generate --check': 10 };
const results = Object.entries(samples).map(([name, values]) => {
  const ms = median(values);
  const target = TARGETS[name];
  return { name, medianMs: Math.round(ms), ratio: Number((ms / baseline).toFixed(2)), target, ok: target === undefined || ms / baseline <= target };
});

if (json) {
  process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, fixture: FIXTURE, baselineMs: Math.round(baseline), results }, null, 2)}\n`);
} else {
  console.log(`CLI cold start, ${ROUNDS} rounds, median wall time (fixture ${FIXTURE})`);
  for (const r of results) {
    const verdict = r.target === undefined ? 'baseline' : `${r.ok ? 'ok ' : 'MISS'} (target ≤ ${r.target}×)`;
    console.log(`  ${r.name.padEnd(28)} ${String(r.medianMs).padStart(6)} ms  ${`${r.ratio.toFixed(2)}×`.padStart(7)}  ${verdict}`);
  }
}
if (assert && results.some((r) => !r.ok)) process.exitCode = 1;
