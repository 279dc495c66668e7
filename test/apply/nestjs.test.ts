import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

describe.skipIf(skip !== undefined)('apply on the NestJS fixture app', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('nestjs');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('marks the handler and registers the interceptor in the module, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    const controller = await readFile(path.join(copy.dir, 'src/invoices.controller.ts'), 'utf8');
    expect(controller).toContain('  @Post()\n  @Idempotent(ACTIONS.issueInvoice)\n  @HttpCode(201)\n');
    const module = await readFile(path.join(copy.dir, 'src/app.module.ts'), 'utf8');
    expect(module).toContain('providers: [...idempotencyProviders(idempotency)]');
    // The only step left: the app's callers must start sending the key (apply does not edit client code yet).
    expect(first.manual.map((m) => m.reason)).toEqual([
      expect.stringContaining('callers must now send an Idempotency-Key header'),
      // The app's own test posts to the route (now with a key); its node:test script sets no NODE_ENV.
      expect.stringContaining('they also need a store: the instance uses the memory store when NODE_ENV=test'),
    ]);
    expect(await compile(copy.dir)).toBe('');
    const own = await runOwnTests(copy.dir);
    expect(own.ok, own.output).toBe(true);

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
  });

  it('issues one invoice for 50 concurrent requests with the same key', async () => {
    schema = await createAppSchema('nestjs', copy.migration, 'CREATE TABLE invoices (id serial PRIMARY KEY, customer_id text NOT NULL, amount_cents int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Promise<INestApplication> };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const app = await createApp();
    await app.listen(0, '127.0.0.1');
    const address = await app.getUrl();
    try {
      const request = { key: 'invoice-5d10', user: 'customer-1', body: { customerId: 'cus-77', amountCents: 4900 } };
      const url = `${address.replace('[::1]', '127.0.0.1')}/invoices`;
      const pool = schema.pool;
      await expectOneExecution(url, request, async () => (await pool.query('SELECT count(*)::int AS n FROM invoices')).rows[0].n as number);
    } finally {
      await app.close();
      await db.end();
    }
  });
});
