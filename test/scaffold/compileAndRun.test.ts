import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, ROOT } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`scaffold suite against PostgreSQL skipped: ${skip}`);

/**
 * Every Express + PostgreSQL design we ship an example for, plus the saga/Adyen design moved onto Express so the
 * saga, Adyen and high-volume paths are compiled and exercised too.
 */
const CASES: Array<{ label: string; model: () => ReturnType<typeof modelFor> }> = [
  { label: 'express-stripe', model: () => modelFor('express-stripe-payments') },
  {
    label: 'adyen-saga-on-express',
    model: () =>
      modelFor('nestjs-adyen-saga', (raw) => {
        (raw.stack as Record<string, unknown>).framework = 'express';
        (raw.stack as Record<string, unknown>).testFramework = 'vitest';
        raw.payments = ['adyen', 'paypal'];
        raw.conflictStatus = 409;
        raw.inFlight = 'wait';
      }),
  },
];

describe.each(CASES)('generated scaffolding for $label', ({ label, model }) => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('compiles with tsc --strict', async () => {
    const generated = await generateAndCompile(await model(), label);
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
  });

  it.skipIf(skip !== undefined)('passes its own generated test suite against the real PostgreSQL', async () => {
    const generated = await generateAndCompile(await model(), `${label}-suite`);
    dirs.push(generated.dir);
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const { stdout } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose'], {
      cwd: generated.dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1' },
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/\d+ failed/);
    expect(stdout).not.toMatch(/skipped/);
  });
});
