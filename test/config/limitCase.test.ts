import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { LIMITS } from '../../src/config/limits.js';
import { RETRY_SOURCES } from '../../src/config/schema.js';
import { runCli } from '../e2e/cli.js';

/**
 * A config at every schema limit at once generates within a fixed memory budget. The proof is the child's
 * peak RSS and a heap cap it must not hit, never elapsed time: the machine may be saturated. Before the limits,
 * 1,000 saga steps took 3-4 GB and 10,000 actions 1 GB.
 */
const pad = (text: string, length: number) => (text + 'x'.repeat(length)).slice(0, length);

function configAtLimits(): Record<string, unknown> {
  const sagas = Math.floor(LIMITS.totalSteps / LIMITS.stepsPerSaga);
  const actions = Array.from({ length: LIMITS.actions }, (_, a) => ({
    name: pad(`action${a}Name`, LIMITS.nameLength),
    trigger: (['http', 'webhook', 'consumer', 'cron'] as const)[a % 4],
    route: pad(`POST /r${a}/`, LIMITS.textLength),
    significantFields: Array.from({ length: LIMITS.significantFields }, (_, f) => `field${f}`),
    provider: 'stripe',
    description: pad('Charges the card ', LIMITS.textLength),
    duplicateImpact: pad('Charged twice ', LIMITS.textLength),
    source: pad(`src/a${a}.ts:`, LIMITS.textLength),
    ...(a < sagas
      ? { steps: Array.from({ length: LIMITS.stepsPerSaga }, (_, s) => ({ name: pad(`step${s}of${a}`, LIMITS.nameLength), compensation: pad(`undo${s}of${a}`, LIMITS.nameLength), provider: 'stripe' })) }
      : {}),
  }));
  return {
    stack: { language: 'typescript', framework: 'express', database: 'postgres' },
    concurrency: 'multi-instance',
    retention: '3650d',
    detectionLatency: '1h',
    scaffold: { dir: 'src/idempotency' },
    retrySources: [...RETRY_SOURCES],
    payments: ['stripe', 'adyen', 'paypal'],
    assumptions: Array.from({ length: LIMITS.assumptions }, (_, i) => pad(`Assumption ${i} `, LIMITS.textLength)),
    actions,
  };
}

describe('a config at the schema limits', () => {
  // Generous: a saturated 2-core machine can take minutes; the budget asserted is memory, not time.
  it('is valid, and generates, verifies and stays under 500 MB peak RSS', { timeout: 600_000 }, async () => {
    const raw = configAtLimits();
    const text = JSON.stringify(raw);
    expect(() => parseConfig(text)).not.toThrow();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ib-limits-'));
    await writeFile(path.join(dir, 'idempotency.config.json'), text);
    const probe = path.join(dir, 'report-rss.mjs');
    // --import also runs in every worker thread (diagram layout runs on one): only the main thread reports.
    await writeFile(
      probe,
      "import { isMainThread } from 'node:worker_threads';\n" +
        "if (isMainThread) process.on('exit', () => process.stderr.write(`maxrss-kb ${process.resourceUsage().maxRSS}\\n`));\n",
    );
    // The heap cap turns a regression into a crash (exit code != 0) even before RSS is read.
    const run = await runCli(['generate', '--cwd', dir, '--dry-run', '--quiet', '--date', '2026-12-03'], {}, ['--max-old-space-size=400', '--import', probe]);
    expect(run.stderr.replace(/maxrss-kb \d+\n/, '')).toBe('');
    expect(run.code).toBe(0);
    const peakMb = Number(/maxrss-kb (\d+)/.exec(run.stderr)?.[1]) / 1024;
    console.log(`config at the limits (${LIMITS.actions} actions, ${LIMITS.totalSteps} saga steps, ${(text.length / 1024 / 1024).toFixed(1)} MB of config): peak RSS ${Math.round(peakMb)} MB`);
    expect(peakMb).toBeGreaterThan(0);
    expect(peakMb).toBeLessThan(500);
  });
});
