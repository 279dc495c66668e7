import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

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
    const stdout = await runGeneratedSuite(generated.dir);
    expect(stdout).not.toMatch(/skipped/);
  });
});
