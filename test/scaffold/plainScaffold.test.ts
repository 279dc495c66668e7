import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { describeAdapterScaffold } from './adapterScaffold.js';
import { generateAndCompile, modelFor } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

await describeAdapterScaffold({
  framework: 'none',
  module: 'plain',
  firstImport: "import { createIdempotency, createPool, POLICY } from './idempotency/index.js';",
  testImport: "from './plain.js'",
});

const skip = await postgresSkipReason();

/** The usual project without a web framework: a queue consumer and a monthly job, keyed by message id and slot. */
describe('plain target for a worker (consumer + cron, derived keys) on PostgreSQL', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip !== undefined)('compiles with tsc --strict and passes its own generated suite', async () => {
    const model = await modelFor('worker-cron-no-payments', (raw) => {
      (raw.stack as Record<string, unknown>).database = 'postgres';
      raw.scaffold = { dir: 'src/idempotency' };
    });
    const generated = await generateAndCompile(model, 'plain-worker');
    dir = generated.dir;
    expect(generated.tscOutput).toBe('');
    const stdout = await runGeneratedSuite(dir);
    // No HTTP action: the suite drives the core the way the consumer and cron processors do, so nothing is skipped.
    expect(stdout.match(/↓/g) ?? []).toHaveLength(0);
  });
});
