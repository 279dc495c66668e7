import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Koa from 'koa';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

describe.skipIf(skip !== undefined)('apply on the Koa fixture app', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('koa');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('--dry-run shows the change and writes nothing', async () => {
    const before = await snapshotTree(copy.dir);
    const preview = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    expect(preview.written).toBe(false);
    expect(preview.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/routes/payments.ts']);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  });

  it('mounts the middleware in the router route, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    const routes = await readFile(path.join(copy.dir, 'src/routes/payments.ts'), 'utf8');
    expect(routes).toContain("import { idempotency } from '../idempotency/instance.js';");
    expect(routes).toContain("paymentsRouter.post('/payments', idempotency.createPayment, async (ctx) => {");
    // The principal is what the handler reads: ctx.state.user.id.
    const instance = await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('principal: (ctx) => (ctx as typeof ctx & AuthenticatedUser).state?.user?.id,');
    expect(first.manual.map((m) => m.reason)).toEqual([expect.stringContaining('callers must now send an Idempotency-Key header')]);
    expect(await compile(copy.dir)).toBe('');
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it('charges once for 50 concurrent requests with the same key', async () => {
    schema = await createAppSchema('koa', copy.migration, 'CREATE TABLE payments (id serial PRIMARY KEY, payer text NOT NULL, amount int NOT NULL, currency text NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Koa };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`;
      const request = { key: 'payment-5d1e', user: 'payer-1', body: { amount: 1250, currency: 'eur' } };
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM payments')).rows[0].n as number);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
    }
  });
});
