import fc from 'fast-check';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { UserError } from '../../src/errors.js';
import { generate } from '../../src/generate.js';
import { verifyPath } from '../../src/verify/verifyPath.js';
import { configTextArb } from './configArbitrary.js';

/**
 * Property: any config text is either rejected as a user error that names a JSON path for every problem, or
 * generates a document (and scaffolding) that verifies on disk. Nothing else may happen: no internal error,
 * no verification failure, no crash. The seed is fixed so CI is reproducible, and printed so a failure can be
 * replayed; FUZZ_SEED and FUZZ_RUNS run a longer campaign (FUZZ_RUNS=1200 for the figure).
 */
const seed = process.env['FUZZ_SEED'] ? Number(process.env['FUZZ_SEED']) : 20261203;
const numRuns = process.env['FUZZ_RUNS'] ? Number(process.env['FUZZ_RUNS']) : 40;
// Campaign only: a config still running after FUZZ_HANG_MS counts as a hang. Never set in CI, where load varies.
const slowLog = process.env['FUZZ_SLOW_LOG'];
// Campaign only: one dot per config, to follow a long run from outside.
const progressLog = process.env['FUZZ_PROGRESS'];
const hangMs = process.env['FUZZ_HANG_MS'] ? Number(process.env['FUZZ_HANG_MS']) : undefined;

// Every line of a config error after the first starts with a JSON path (or "(root)") and says what was found.
// A JSON path, whose quoted keys (`stack["f:x \\"4"]`) may hold any character, then what is wrong.
const PROBLEM_LINE = /^ {2}(\(root\)|[A-Za-z_$[](?:[^:"]|"(?:[^"\\]|\\.)*")*): (found |missing|unknown key|nested more than)/;

const tally = { runs: 0, generated: 0, rejected: 0, failed: 0, slowestMs: 0 };

async function runOne(text: string): Promise<void> {
  tally.runs++;
  if (progressLog) await appendFile(progressLog, '.');
  try {
    await checkOne(text);
  } catch (error) {
    tally.failed++;
    throw error;
  }
}

async function checkOne(text: string): Promise<void> {
  let rejected: unknown;
  try {
    parseConfig(text);
  } catch (error) {
    rejected = error;
  }
  if (rejected !== undefined) {
    if (!(rejected instanceof UserError)) throw rejected;
    const lines = rejected.message.split('\n');
    if (lines.length > 1) for (const line of lines.slice(1)) expect(line).toMatch(PROBLEM_LINE);
    else expect(rejected.message).toMatch(/is not valid JSON|is invalid|MB/);
    tally.rejected++;
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-fuzz-'));
  const started = performance.now();
  try {
    await writeFile(path.join(dir, 'idempotency.config.json'), text);
    const result = await generate({ cwd: dir, date: '2026-12-03' });
    const written = path.join(dir, result.document);
    // A split document is a folder; verify what was delivered exactly as a user would.
    const target = result.plan.some((item) => item.path.startsWith(`${result.document.replace(/\.(html|md)$/, '')}/`)) ? written.replace(/\.(html|md)$/, '') : written;
    const findings = await verifyPath(target).catch(async () => verifyPath(written));
    expect(findings).toEqual([]);
    tally.generated++;
  } finally {
    const elapsed = performance.now() - started;
    tally.slowestMs = Math.max(tally.slowestMs, elapsed);
    // Campaign diagnostics: the slowest configs, to look for anything super-linear.
    if (slowLog && elapsed > 15_000) await appendFile(slowLog, `${Math.round(elapsed)} ms ${text}\n`);
    await rm(dir, { recursive: true, force: true });
  }
}

describe('config fuzz', () => {
  afterAll(() => {
    // Figures for the campaign report; not assertions.
    console.log(
      `config fuzz: seed ${seed}, ${tally.runs} configs, ${tally.generated} generated and verified, ${tally.rejected} rejected with a path, ` +
        `${tally.failed} failed (internal error or unverified output); slowest ${Math.round(tally.slowestMs)} ms, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
    );
  });

  it(`accepts or rejects every config cleanly (seed ${seed}, ${numRuns} runs)`, { timeout: 0 }, async () => {
    console.log(`config fuzz: seed ${seed}, ${numRuns} runs (set FUZZ_SEED / FUZZ_RUNS to change)`);
    await fc.assert(fc.asyncProperty(configTextArb, runOne), { seed, numRuns, endOnFailure: true, ...(hangMs ? { timeout: hangMs } : {}) });
    // The arbitrary must exercise both paths, or the property proves little.
    expect(tally.generated).toBeGreaterThan(0);
    expect(tally.rejected).toBeGreaterThan(0);
  });
});
