import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, expectOneExecution, fakeStripe, type AppSchema } from './blackBox.js';
import { compile, copyFixture, runOwnTests, snapshotTree, type FixtureCopy } from './fixtureApp.js';

/** One fixture app whose route apply wires with a route-middleware argument (Koa, Hono), and what to expect of it. */
export interface MiddlewareFixture {
  readonly fixture: 'koa' | 'hono';
  readonly label: string;
  /** The route file apply edits, and the registration line it must produce there. */
  readonly routeFile: string;
  readonly wiredRoute: string;
  /** The principal line of the instance module, read from what the handler reads. */
  readonly principal: string;
  /** The app's own table (DDL) and the one request sent 50 times. */
  readonly table: string;
  readonly ddl: string;
  readonly route: string;
  readonly request: { key: string; user: string; body: unknown };
  /**
   * The handler's Stripe call, as apply --yes must leave it (keyed from the route's claim); the duplicates then run
   * against a local stand-in for Stripe (STRIPE_API_BASE), which must see one derived key.
   */
  readonly keyedStripeCall?: string;
  /**
   * The handler's own statements on the project's pool that apply moves onto the claim's transaction (claimWrites.ts):
   * the binding it adds, for a handler with no provider call. apply then writes claimTransaction.ts and asks for generate.
   */
  readonly movedWrites?: string;
  /** Serves the compiled app's `createApp()` on an ephemeral loopback port. */
  readonly serve: (createApp: () => unknown) => Promise<Server>;
}

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

/** apply --dry-run, apply --yes (type-checks, the app's own tests pass, a second run is a no-op), then 50 concurrent duplicates. */
export function describeMiddlewareFixture(spec: MiddlewareFixture): void {
  describe.skipIf(skip !== undefined)(`apply on the ${spec.label} fixture app`, { timeout: 300_000 }, () => {
    let copy: FixtureCopy;
    let schema: AppSchema | undefined;

    beforeAll(async () => {
      copy = await copyFixture(spec.fixture);
    });
    afterAll(async () => {
      await schema?.drop();
      await copy?.remove();
    });

    it('--dry-run shows the change and writes nothing', async () => {
      const before = await snapshotTree(copy.dir);
      const preview = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
      expect(preview.written).toBe(false);
      // The app's own test posts to the protected route: it gets a key too (projectTests.ts).
      const accessor = spec.movedWrites === undefined ? [] : ['src/idempotency/claimTransaction.ts'];
      expect(preview.changes.map((c) => c.path).sort()).toEqual([...accessor, 'src/idempotency/instance.ts', spec.routeFile, 'test/app.test.ts']);
      expect(await snapshotTree(copy.dir)).toEqual(before);
    });

    it('mounts the middleware before the handler, type-checks, keeps the app tests green, and is a no-op the second time', async () => {
      const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(first.written).toBe(true);
      const routes = await readFile(path.join(copy.dir, spec.routeFile), 'utf8');
      expect(routes).toContain("import { idempotency } from '../idempotency/instance.js';");
      expect(routes).toContain(spec.wiredRoute);
      if (spec.keyedStripeCall !== undefined) expect(routes).toContain(spec.keyedStripeCall);
      if (spec.movedWrites !== undefined) expect(routes).toContain(spec.movedWrites);
      const instance = await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8');
      expect(instance).toContain(spec.principal);
      expect(first.manual.map((m) => m.reason)).toEqual([
      expect.stringContaining('callers must now send an Idempotency-Key header'),
      ...(spec.movedWrites === undefined ? [] : [expect.stringContaining('run `idempotency-builder generate` after this apply')]),
      // The app's own test posts to the route (now with a key); its node:test script sets no NODE_ENV.
      expect.stringContaining('they also need a store: the instance uses the memory store when NODE_ENV=test'),
    ]);
      expect(await compile(copy.dir)).toBe('');
      const own = await runOwnTests(copy.dir);
      expect(own.ok, own.output).toBe(true);

      const tree = await snapshotTree(copy.dir);
      const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(again.written).toBe(false);
      expect(await snapshotTree(copy.dir)).toEqual(tree);
    });

    it(`runs the action once for 50 concurrent requests with the same key`, async () => {
      schema = await createAppSchema(spec.fixture, copy.migration, spec.ddl);
      process.env['DATABASE_URL'] = schema.url;
      const stripe = spec.keyedStripeCall !== undefined ? await fakeStripe() : undefined;
      if (stripe) process.env['STRIPE_API_BASE'] = stripe.base;
      const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => unknown };
      const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
      const server = await spec.serve(createApp);
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${spec.route}`;
        const pool = schema.pool;
        await expectOneExecution(url, spec.request, async () => (await pool.query(`SELECT count(*)::int AS n FROM ${spec.table}`)).rows[0].n as number);
        if (stripe) {
          expect(stripe.keys).toHaveLength(1);
          expect(stripe.keys[0]).toMatch(/^[0-9a-f]{64}$/);
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await db.end();
        await stripe?.close();
      }
    });
  });
}
