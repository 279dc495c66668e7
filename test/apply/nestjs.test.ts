import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import type { Pool } from 'pg';
import { expect, it } from 'vitest';
import { expectOneExecution } from './blackBox.js';
import { applyFirst, describeOnFixtureApp, expectAppliedCleanly } from './fixtureApp.js';

await describeOnFixtureApp('apply on the NestJS fixture app', 'nestjs', (fixture) => {
  it('marks the handler and registers the interceptor in the module, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
    const { copy } = fixture;
    const first = await applyFirst(copy.dir);
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
    await expectAppliedCleanly(copy.dir);
  });

  it('issues one invoice for 50 concurrent requests with the same key', async () => {
    const { copy } = fixture;
    const schema = await fixture.schema('nestjs', 'CREATE TABLE invoices (id serial PRIMARY KEY, customer_id text NOT NULL, amount_cents int NOT NULL)');
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
