import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

type Refund = { refundId: number; orderId: string };

describe.skipIf(skip !== undefined)('apply on the fixture without a web framework (a script function)', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('plain');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('--dry-run shows the change and writes nothing', async () => {
    const before = await snapshotTree(copy.dir);
    const preview = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    expect(preview.written).toBe(false);
    expect(preview.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/jobs/refunds.ts']);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  });

  it('wraps the function with its idempotent(fn) wrapper and type-checks', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    expect(first.manual).toEqual([]);
    const jobs = await readFile(path.join(copy.dir, 'src/jobs/refunds.ts'), 'utf8');
    expect(jobs).toContain("import { idempotency } from '../idempotency/instance.js';");
    expect(jobs).toContain(`export async function issueRefund(request: RefundRequest): Promise<{ refundId: number; orderId: string }> {
  return idempotency.issueRefund({ fingerprintInput: request }, async () => {
    if (request.amount <= 0) throw new RangeError('a refund is a positive amount');`);
    // The read-only function next to it is left alone.
    expect(jobs).toContain('export async function refundsOf(orderId: string): Promise<number> {\n  const { rows }');
    expect(await compile(copy.dir)).toBe('');
  });

  it("keeps the app's own tests green, and a second apply changes nothing", async () => {
    // The wrapper claims before the function runs: the app's own tests now need the store's table.
    schema = await createAppSchema('plain', copy.migration, 'CREATE TABLE refunds (id serial PRIMARY KEY, order_id text NOT NULL, amount int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it('refunds once for 50 concurrent calls for the same order', async () => {
    expect(schema).toBeDefined();
    const { issueRefund } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/jobs/refunds.js')).href)) as { issueRefund: (r: { orderId: string; amount: number }) => Promise<Refund> };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const instance = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/idempotency/instance.js')).href)) as { idempotency: { core: unknown } };
    try {
      const request = { orderId: 'order-3c9f', amount: 1999 };
      const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => issueRefund(request)));
      // Repeats while the first runs are refused (InFlightError), or fail closed when the store is saturated.
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as Error).name] : []));
      expect(refused.every((name) => name === 'InFlightError' || name === 'StoreUnavailableError'), refused.join(',')).toBe(true);
      // Retried until the stored result replays: polls on the answer, never a fixed sleep.
      let final: Refund | undefined;
      for (let attempt = 0; final === undefined && attempt < 600; attempt++) {
        final = await issueRefund(request).catch(async (error: Error) => {
          if (error.name !== 'InFlightError' && error.name !== 'StoreUnavailableError') throw error;
          await new Promise((resolve) => setImmediate(resolve));
          return undefined;
        });
      }
      const results = [...outcomes.flatMap((o) => (o.status === 'fulfilled' ? [JSON.stringify(o.value)] : [])), JSON.stringify(final)];
      expect(new Set(results).size).toBe(1);
      expect(final?.orderId).toBe('order-3c9f');
      expect((await schema!.pool.query('SELECT count(*)::int AS n FROM refunds')).rows[0].n).toBe(1);
    } finally {
      await db.end();
      expect(instance.idempotency.core).toBeDefined();
    }
  });
});
