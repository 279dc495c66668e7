import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualStep } from '../../src/apply/types.js';
import { runApply } from '../../src/cli/apply.js';
import { runInit } from '../../src/cli/init.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { createLogger } from '../../src/logger.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, ROOT, snapshotTree } from './fixtureApp.js';

export interface GraphqlError {
  message: string;
  extensions?: { code?: string };
}

interface Answer {
  data: { placeOrder: { id: string; sku: string; quantity: number } | null } | null;
  errors?: GraphqlError[];
}

/** A GraphQL server without a web framework: its files, its packages, and what apply must do to it. */
export interface GraphqlServerFixture {
  readonly title: string;
  /** The project's files; src/app.ts exports `startApp(): Promise<{ url: string; stop(): Promise<void> }>` on an ephemeral port. */
  readonly files: Readonly<Record<string, string>>;
  /** The package cache the project's node_modules links to, and its installer (a skip reason when npm cannot). */
  readonly cache: string;
  readonly install: () => Promise<string | undefined>;
  /** Part of the throwaway schema's name. */
  readonly schema: string;
  /** Text the wrapped src/app.ts must contain. */
  readonly wrapped: string;
  /** Manual steps the first apply must list, in order. */
  readonly manual: readonly RegExp[];
  /** The name of the wrapper's error (MismatchError, …) as the server tells the caller. */
  readonly errorOf: (error: GraphqlError) => string | undefined;
}

/**
 * Issue #19 outside NestJS: init --yes gives the server the plain wrapper, apply --yes wraps its resolver-map mutation
 * with it (the key from the request in the GraphQL context), the project type-checks, a second apply changes
 * nothing, and on real PostgreSQL one key runs the mutation once: twice in a row, ten at once; other arguments under
 * that key are refused in the GraphQL errors.
 */
export async function graphqlServerSuite(spec: GraphqlServerFixture): Promise<void> {
  const skip = (await postgresSkipReason()) ?? (await spec.install());
  if (skip) console.warn(`skipped: ${skip}`);
  describe.skipIf(skip !== undefined)(spec.title, { timeout: 600_000 }, () => {
    let dir: string;
    let schema: AppSchema | undefined;

    beforeAll(async () => {
      // Inside the repository, so pg and @types resolve from its node_modules; the server from the cache the app links to.
      await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
      dir = await mkdtemp(path.join(ROOT, '.tmp', `apply-${spec.schema}-`));
      for (const [rel, text] of Object.entries(spec.files)) {
        await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
        await writeFile(path.join(dir, rel), text);
      }
      await symlink(path.join(spec.cache, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    });
    afterAll(async () => {
      await schema?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('init --yes gives the plain target; apply --yes wraps the mutation, type-checks, and is a no-op the second time', async () => {
      const quiet = createLogger({ out: process.stderr, err: process.stderr, color: false, quiet: true });
      await runInit({ cwd: dir, yes: true, date: '2026-01-15' }, { interactive: false, log: quiet });
      expect(await readdir(path.join(dir, 'src/idempotency'))).toContain('plain.ts');
      const unwrapped = async () => (await auditProject(dir)).findings.filter((f) => f.ruleId === 'action-not-wrapped');
      expect(await unwrapped()).toHaveLength(1);

      const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
      expect(first.stale).toEqual([]);
      expect(first.written).toBe(true);
      expect(first.changes.map((c) => c.path).sort()).toEqual(['src/app.ts', 'src/idempotency/instance.ts']);
      expect(first.edits.map((e) => e.summary)).toContain('runs placeOrder inside idempotency.placeOrder(…), keyed by the Idempotency-Key header of the request in its GraphQL context, its arguments fingerprinted');
      // Nothing says the mutation must be wired by hand.
      expect(first.manual.map((step: ManualStep) => step.reason)).toEqual(spec.manual.map((reason) => expect.stringMatching(reason)));
      const app = await readFile(path.join(dir, 'src/app.ts'), 'utf8');
      expect(app).toContain("import { idempotency } from './idempotency/instance.js';");
      expect(app).toContain(spec.wrapped);
      expect(await compile(dir)).toBe('');
      expect(await unwrapped()).toEqual([]);

      // The document's wiring section lists the wrap, and no "wire by hand" for the mutation.
      const { generate } = await import('../../src/generate.js');
      const result = await generate({ cwd: dir, format: 'md', date: '2026-01-15', diagrams: 'beautiful-mermaid' });
      const wiring = ((await readFile(path.join(dir, result.document), 'utf8')).split('Wiring in your code')[1] ?? '').split(/\n#+ /)[0]!;
      expect(wiring).toContain('runs placeOrder inside idempotency.placeOrder(…)');
      expect(wiring).not.toMatch(/no generated adapter|by hand/);

      const before = await snapshotTree(dir);
      const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(again.written).toBe(false);
      expect(await snapshotTree(dir)).toEqual(before);
    });

    it('runs a mutation sent twice with one key once, ten at once once, and refuses other arguments under that key', async () => {
      const migration = await readFile(path.join(dir, 'src/idempotency/migrations/001_create_idempotency_store.sql'), 'utf8');
      schema = await createAppSchema(spec.schema, migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL)');
      process.env['DATABASE_URL'] = schema.url;
      const { startApp } = (await import(pathToFileURL(path.join(dir, 'dist/src/app.js')).href)) as { startApp: () => Promise<{ url: string; stop(): Promise<void> }> };
      const { db } = (await import(pathToFileURL(path.join(dir, 'dist/src/db.js')).href)) as { db: Pool };
      const { url, stop } = await startApp();
      const place = async (key: string | undefined, sku: string, quantity: number): Promise<Answer> => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
          body: JSON.stringify({ query: 'mutation Place($sku: String!, $quantity: Int!) { placeOrder(sku: $sku, quantity: $quantity) { id sku quantity } }', variables: { sku, quantity } }),
        });
        return (await response.json()) as Answer;
      };
      const count = async (sku: string) => (await schema!.pool.query('SELECT count(*)::int AS n FROM orders WHERE sku = $1', [sku])).rows[0].n as number;
      try {
        const first = await place('yoga-key-1', 'SKU-1', 2);
        expect(first.errors).toBeUndefined();
        expect(first.data?.placeOrder).toMatchObject({ sku: 'SKU-1', quantity: 2 });
        expect(await place('yoga-key-1', 'SKU-1', 2)).toEqual(first);
        expect(await count('SKU-1')).toBe(1);

        const other = await place('yoga-key-1', 'SKU-1', 3);
        expect(other.data?.placeOrder ?? null).toBeNull();
        expect(other.errors?.map((e) => spec.errorOf(e))).toEqual(['MismatchError']);
        expect(await count('SKU-1')).toBe(1);

        // Ten at once under a new key: one runs, the others wait it out as InFlightError or get its replay. On a
        // saturated machine a claim may also miss the store's time-out and fail closed (StoreUnavailableError, the
        // 503 of the HTTP black-box): never a second execution, counted below.
        const burst = await Promise.all(Array.from({ length: 10 }, () => place('yoga-key-2', 'SKU-2', 1)));
        const refused = burst.flatMap((answer) => answer.errors?.map((e) => spec.errorOf(e)) ?? []);
        expect(refused.every((code) => code === 'InFlightError' || code === 'StoreUnavailableError'), refused.join(',')).toBe(true);
        const replay = await place('yoga-key-2', 'SKU-2', 1);
        expect(replay.errors).toBeUndefined();
        for (const answer of burst.filter((a) => a.errors === undefined)) expect(answer).toEqual(replay);
        expect(await count('SKU-2')).toBe(1);

        // No key: refused before anything runs.
        const keyless = await place(undefined, 'SKU-3', 1);
        expect(keyless.errors?.map((e) => spec.errorOf(e))).toEqual(['InvalidKeyError']);
        expect(await count('SKU-3')).toBe(0);
      } finally {
        await stop();
        await db.end();
      }
    });
  });
}
