// Benchmark: `inspect` and `audit` on a real codebase against a bare `ts.createSourceFile` parse of the same files,
// in the same process, interleaved, medians. Targets (issue 20): inspect ≤ 1.5× the bare parse, audit ≤ 2×, and the
// peak RSS of inspecting a 2,000-file tree ≤ 600 MB.
//
// The tree is a real server package downloaded from the npm registry on first use (with `npm pack`, which checks
// the registry's integrity hash) and kept in node_modules/.cache/: @medusajs/medusa 1.20.11, an Express + TypeORM
// commerce backend with routes, payment and webhook handling, subscribers and jobs (1,251 source files). The
// tarball ships the compiled JavaScript of its TypeScript sources in dist/; it is unpacked as src/ because the
// inspector skips build-output folders. BENCH_TREE=/path/to/project measures another project instead.
// Needs `npm run build` first (imports dist/). BENCH_ROUNDS (default 5). `--json`, `--assert` as in bench/cli.mjs.
// BENCH_BASELINE=/path/to/another/built/checkout also times its inspect and audit in the same rounds, so a change is
// judged against the code before it at the same load (all ratios share this run's bare parse).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ts } from 'ts-morph';
import { appendResults, machineFacts, median } from './lib/results.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const json = process.argv.includes('--json');
const assert = process.argv.includes('--assert');
const loadAtStart = os.loadavg()[0].toFixed(1);
const PACKAGE = { name: '@medusajs/medusa', version: '1.20.11' };
const CACHE = path.join(ROOT, 'node_modules/.cache/idempotency-builder-bench');
const TARGETS = { inspect: 1.5, audit: 2, rssMb: 600 };

const dist = (file) => import(new URL(`../dist/${file}`, import.meta.url).href);
const [{ inspectProject }, { auditProject }, { walkProject }] = await Promise.all([
  dist('inspect/index.js'),
  dist('findings/auditProject.js'),
  dist('inspect/files/walkProject.js'),
]).catch(() => {
  console.error('bench: run `npm run build` first (dist/ is missing)');
  process.exit(2);
});

const baselineDir = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;
const baselineLabel = baselineDir ? path.basename(baselineDir) : undefined;
const baseline = baselineDir
  ? await Promise.all([
    import(new URL(`file://${path.join(baselineDir, 'dist/inspect/index.js')}`).href),
    import(new URL(`file://${path.join(baselineDir, 'dist/findings/auditProject.js')}`).href),
  ]).then(([i, a]) => ({ inspectProject: i.inspectProject, auditProject: a.auditProject }))
  : undefined;

/** The real tree, downloaded and unpacked once. */
async function realTree() {
  const dir = path.join(CACHE, `${PACKAGE.name.replace('/', '+')}@${PACKAGE.version}`);
  if (existsSync(path.join(dir, '.complete'))) return dir;
  await mkdir(CACHE, { recursive: true });
  const work = await mkdtemp(path.join(CACHE, 'download-'));
  try {
    const pack = spawnSync('npm', ['pack', `${PACKAGE.name}@${PACKAGE.version}`, '--pack-destination', work, '--json'], { encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack ${PACKAGE.name}@${PACKAGE.version} failed (the bench needs the npm registry once):\n${pack.stderr}`);
    const [{ filename }] = JSON.parse(pack.stdout);
    const untar = spawnSync('tar', ['xzf', path.join(work, filename), '-C', work], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    await rename(path.join(work, 'package/dist'), path.join(dir, 'src'));
    await rename(path.join(work, 'package/package.json'), path.join(dir, 'package.json'));
    await writeFile(path.join(dir, '.complete'), `${PACKAGE.name}@${PACKAGE.version}\n`);
    return dir;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The files the inspector reads, found the way it finds them (not timed). */
async function sourceFiles(root) {
  return (await walkProject(root)).files.filter((file) => file.kind === 'source').map((file) => file.abs);
}

const kindOf = (file) => (file.endsWith('.tsx') ? ts.ScriptKind.TSX : file.endsWith('.jsx') ? ts.ScriptKind.JSX : /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS);

/** The baseline: read every file and parse it, nothing else. */
async function bareParse(files) {
  let statements = 0;
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    statements += ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kindOf(file)).statements.length;
  }
  return statements;
}

async function time(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

/** A 2,000-file tree: the real one plus copies of its first files, for the memory bound. */
async function twoThousandFiles(root, files) {
  const big = await mkdtemp(path.join(os.tmpdir(), 'ib-bench-inspect-'));
  await copyFile(path.join(root, 'package.json'), path.join(big, 'package.json'));
  const wanted = Math.max(0, 2000 - files.length);
  const all = [...files, ...files.slice(0, wanted).map((file) => ({ copy: true, file }))];
  for (const entry of all) {
    const file = typeof entry === 'string' ? entry : entry.file;
    const rel = path.relative(root, file);
    const target = path.join(big, typeof entry === 'string' ? rel : path.join('src/copy', rel));
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(file, target);
  }
  return { dir: big, count: all.length };
}

/** Peak RSS of a fresh process that only inspects `dir`. */
function inspectRssMb(dir) {
  const script = `const { inspectProject } = await import(${JSON.stringify(new URL('../dist/inspect/index.js', import.meta.url).href)}); await inspectProject(${JSON.stringify(dir)}); process.stdout.write(String(process.resourceUsage().maxRSS));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`inspect in a child process failed:\n${run.stderr}`);
  return Number(run.stdout) / 1024;
}

const root = process.env.BENCH_TREE ? path.resolve(process.env.BENCH_TREE) : await realTree();
const label = process.env.BENCH_TREE ? root : `${PACKAGE.name}@${PACKAGE.version}`;
const files = await sourceFiles(root);

// Warm both sides once so JIT and module loading are billed to neither.
await bareParse(files);
await inspectProject(root);
await auditProject(root);
if (baseline) {
  await baseline.inspectProject(root);
  await baseline.auditProject(root);
}
const samples = { bare: [], inspect: [], audit: [], baseInspect: [], baseAudit: [] };
let findings = 0;
let codeFindings = 0;
for (let round = 0; round < ROUNDS; round++) {
  samples.bare.push((await time(() => bareParse(files))).ms);
  const inspected = await time(() => inspectProject(root));
  samples.inspect.push(inspected.ms);
  findings = inspected.result.findings.length;
  const audited = await time(() => auditProject(root));
  samples.audit.push(audited.ms);
  codeFindings = audited.result.findings.length;
  if (baseline) {
    samples.baseInspect.push((await time(() => baseline.inspectProject(root))).ms);
    samples.baseAudit.push((await time(() => baseline.auditProject(root))).ms);
  }
}
const big = await twoThousandFiles(root, files);
let rssMb;
try {
  rssMb = inspectRssMb(big.dir);
} finally {
  await rm(big.dir, { recursive: true, force: true });
}

const bareMs = median(samples.bare);
const rows = [
  { name: 'bare parse (read + ts.createSourceFile)', ms: bareMs },
  { name: 'inspect', ms: median(samples.inspect), target: TARGETS.inspect },
  { name: 'audit', ms: median(samples.audit), target: TARGETS.audit },
  ...(baseline
    ? [
      { name: `inspect (baseline ${baselineLabel})`, ms: median(samples.baseInspect) },
      { name: `audit (baseline ${baselineLabel})`, ms: median(samples.baseAudit) },
    ]
    : []),
].map((row) => ({ ...row, ratio: row.ms / bareMs, ok: row.target === undefined || row.ms / bareMs <= row.target }));
const rssOk = rssMb <= TARGETS.rssMb;
const facts = machineFacts(loadAtStart);

appendResults({
  title: 'Inspector (bench/inspect.mjs)',
  facts,
  note: `Tree: ${label}, ${files.length} source files; ${findings} inspection findings, ${codeFindings} audit findings. ${ROUNDS} rounds, interleaved, medians, in one process after a warm-up. Peak RSS: a fresh process inspecting ${big.count} files (the tree plus copies of its first files).`,
  header: ['case', 'median ms', '× bare parse', 'target', ''],
  rows: [
    ...rows.map((r) => [r.name, String(Math.round(r.ms)), `${r.ratio.toFixed(2)}×`, r.target === undefined ? '' : `≤ ${r.target}×`, r.target === undefined ? '' : r.ok ? 'met' : 'missed']),
    [`peak RSS, inspect of ${big.count} files`, `${Math.round(rssMb)} MB`, '', `≤ ${TARGETS.rssMb} MB`, rssOk ? 'met' : 'missed'],
  ],
});

if (json) {
  process.stdout.write(`${JSON.stringify({ tree: label, files: files.length, rounds: ROUNDS, machine: facts, findings, codeFindings, rows, rssMb: Math.round(rssMb), rssFiles: big.count }, null, 2)}\n`);
} else {
  console.log(`Inspector on ${label} (${files.length} source files), ${ROUNDS} rounds (${facts})`);
  for (const r of rows) {
    const verdict = r.target === undefined ? '' : `${r.ok ? 'met   ' : 'MISSED'} (target ≤ ${r.target}×)`;
    console.log(`  ${r.name.padEnd(40)} ${String(Math.round(r.ms)).padStart(6)} ms  ${`${r.ratio.toFixed(2)}×`.padStart(7)}  ${verdict}`);
  }
  console.log(`  peak RSS, inspect of ${big.count} files ${String(Math.round(rssMb)).padStart(10)} MB           ${rssOk ? 'met   ' : 'MISSED'} (target ≤ ${TARGETS.rssMb} MB)`);
}
if (assert && (rows.some((r) => !r.ok) || !rssOk)) process.exitCode = 1;
