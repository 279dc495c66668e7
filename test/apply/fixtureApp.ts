import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyResult } from '../../src/apply/index.js';
import type { ManualStep } from '../../src/apply/types.js';
import { runApply } from '../../src/cli/apply.js';
import { loadConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, signedStripeEvent, stripeDelivery, WEBHOOK_SECRET, type AppSchema } from './blackBox.js';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
const NOW = new Date('2026-01-15T00:00:00Z');

/** A compiled fixture app serving on an ephemeral loopback port. */
export interface Running {
  readonly url: string;
  close(): Promise<void>;
}

/** A node:http server once it listens (Express, Koa, @hono/node-server), as a Running app. */
export const listening = async (server: Server): Promise<Running> => {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
};

export interface FixtureCopy {
  dir: string;
  /** The generated migration, to create the store's tables in a throwaway schema. */
  migration: string;
  remove(): Promise<void>;
}

/**
 * A fresh copy of fixtures/apply/<name> under .tmp (inside the repo, so express/pg/stripe resolve from our
 * node_modules as they would from the app's), with the scaffolding `generate` would write. The document is not
 * rendered: apply reads only the config and the scaffold folder.
 */
export async function copyFixture(name: string, changeConfig?: (text: string) => string): Promise<FixtureCopy> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `apply-${name}-`));
  await cp(path.join(ROOT, 'fixtures/apply', name), dir, { recursive: true });
  // A variant of the fixture's config (another provider list), before the scaffold is generated from it.
  if (changeConfig) await writeFile(path.join(dir, 'idempotency.config.json'), changeConfig(await readFile(path.join(dir, 'idempotency.config.json'), 'utf8')));
  const { config } = await loadConfig(dir);
  const model = buildDesign(config, undefined, { now: NOW });
  const files = generateScaffold(model, { dir: config.scaffold === false ? 'src/idempotency' : config.scaffold.dir });
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  const ddl = files.find((file) => file.role === 'ddl');
  return { dir, migration: ddl ? await readFile(path.join(dir, ddl.path), 'utf8') : '', remove: () => rm(dir, { recursive: true, force: true }) };
}

/** tsc -p on the app (type-check and emit to dist/): '' when it compiled cleanly, else the diagnostics. */
export async function compile(dir: string): Promise<string> {
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

/** The app's own tests (node:test on the emitted JavaScript), as its `npm test` runs them. */
export async function runOwnTests(dir: string): Promise<{ ok: boolean; output: string }> {
  // A fixture whose script force-exits (its pools would hold the process open for their idle timeout) does so here too.
  const script = (JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { scripts?: { test?: string } }).scripts?.test ?? '';
  const flags = script.includes('--test-force-exit') ? ['--test-force-exit'] : [];
  try {
    // As the project's own runner would: NODE_ENV=test, and no IDEMPOTENCY_STORE a black-box test of ours set.
    const { IDEMPOTENCY_STORE: _ours, ...env } = process.env;
    const { stdout } = await run(process.execPath, ['--test', ...flags, 'dist/test/'], { cwd: dir, env: { ...env, NODE_ENV: 'test' } });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

/** A suite's copy of a fixture app, and throwaway schemas (the store's migration plus the app's DDL) it drops after. */
export interface FixtureApp {
  readonly copy: FixtureCopy;
  schema(label: string, appDdl: string): Promise<AppSchema>;
}

/** A suite on a copy of fixtures/apply/<fixture>, skipped (with a warning) where PostgreSQL is not reachable. */
export async function describeOnFixtureApp(title: string, fixture: string, body: (app: FixtureApp) => void): Promise<void> {
  const skip = await postgresSkipReason();
  if (skip) console.warn(`skipped: ${skip}`);
  describe.skipIf(skip !== undefined)(title, { timeout: 300_000 }, () => {
    let copy: FixtureCopy | undefined;
    const schemas: AppSchema[] = [];
    beforeAll(async () => {
      copy = await copyFixture(fixture);
    });
    afterAll(async () => {
      for (const schema of schemas.splice(0)) await schema.drop();
      await copy?.remove();
    });
    body({
      get copy() {
        return copy!;
      },
      schema: async (label, appDdl) => {
        const schema = await createAppSchema(label, copy!.migration, appDdl);
        schemas.push(schema);
        return schema;
      },
    });
  });
}

/** The first `apply --yes` on a copy: it writes. */
export async function applyFirst(dir: string): Promise<ApplyResult> {
  const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
  expect(first.written).toBe(true);
  return first;
}

/** After the first apply: the app type-checks, its own tests pass, and a second apply changes nothing. */
export async function expectAppliedCleanly(dir: string): Promise<void> {
  expect(await compile(dir)).toBe('');
  const own = await runOwnTests(dir);
  expect(own.ok, own.output).toBe(true);
  const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
  expect(again.changes).toEqual([]);
  expect(again.written).toBe(false);
}

/** Every file under `dir` (dist/ and node_modules/ aside) with its text: equal snapshots mean nothing was written. */
/**
 * apply --yes a second time on an applied copy: it must change nothing and write nothing, the tree byte for byte as
 * before. Returns the run, for what a test checks beyond that (its manual steps).
 */
export async function applyAgain(dir: string): Promise<ApplyResult> {
  const before = await snapshotTree(dir);
  const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
  expect(again.changes).toEqual([]);
  expect(again.written).toBe(false);
  expect(await snapshotTree(dir)).toEqual(before);
  return again;
}

export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const { readdir } = await import('node:fs/promises');
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      // node_modules may be a symlink (a fixture sharing installed packages), which is no directory entry.
      if (entry.name === 'dist' || entry.name === 'node_modules') continue;
      if (entry.isDirectory()) await walk(child);
      else out[child] = await readFile(path.join(dir, child), 'utf8');
    }
  };
  await walk('');
  return out;
}

/** A fixture app with one Stripe webhook route that verifies the signature itself, and what apply must do to it. */
export interface WebhookFixture {
  /** fixtures/apply/<fixture>, and what the suite calls the app. */
  readonly fixture: string;
  readonly title: string;
  /** Every file the first apply writes. */
  readonly changed: readonly string[];
  /** The fixture's own checks on what the first apply returned and wrote. */
  readonly wrote: (first: ApplyResult, read: (file: string) => Promise<string>) => Promise<void>;
  /** Manual steps that belong to the fixture's other routes (the callers' key header): every other one is a failure. */
  readonly otherSteps?: (step: ManualStep) => boolean;
  /** Part of the throwaway schema's name, and the Stripe event id delivered 50 times. */
  readonly schema: string;
  readonly eventId: string;
  /** Serves the compiled app's `createApp()` on an ephemeral loopback port. */
  readonly serve: (createApp: () => unknown) => Promise<Server>;
}

/**
 * Issue #19's black-box check of a webhook route: apply --yes (the fixture's checks), the app type-checks, a second
 * apply changes nothing, then a forged delivery is refused and 50 concurrent deliveries of one signed event insert
 * one row, every delivery answered 200 (or 409 while the first still runs, as Stripe resends on).
 */
export async function webhookFixtureSuite(spec: WebhookFixture): Promise<void> {
  const skip = await postgresSkipReason();
  if (skip) console.warn(`skipped: ${skip}`);
  describe.skipIf(skip !== undefined)(spec.title, () => {
    let copy: FixtureCopy;
    let schema: AppSchema | undefined;
    const left = (manual: readonly ManualStep[]) => manual.filter((step) => !spec.otherSteps?.(step));

    beforeAll(async () => {
      copy = await copyFixture(spec.fixture);
    });
    afterAll(async () => {
      await schema?.drop();
      await copy?.remove();
    });

    it('apply --yes wires the webhook, the app type-checks, and a second apply is a no-op', async () => {
      const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(first.stale).toEqual([]);
      expect(first.written).toBe(true);
      expect(left(first.manual)).toEqual([]);
      expect(first.changes.map((c) => c.path).sort()).toEqual([...spec.changed].sort());
      await spec.wrote(first, (file) => readFile(path.join(copy.dir, file), 'utf8'));

      expect(await compile(copy.dir)).toBe('');
      const before = await snapshotTree(copy.dir);
      const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
      expect(again.changes).toEqual([]);
      expect(left(again.manual)).toEqual([]);
      expect(again.written).toBe(false);
      expect(await snapshotTree(copy.dir)).toEqual(before);
    }, 300_000);

    it('applies an event delivered 50 times at once exactly once, answering every delivery', async () => {
      schema = await createAppSchema(spec.schema, copy.migration, 'CREATE TABLE fulfilments (id serial PRIMARY KEY, intent text NOT NULL)');
      Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
      const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => unknown };
      const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
      const server = await spec.serve(createApp);
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
        const event = signedStripeEvent(spec.eventId);
        const deliver = (delivery = event) => fetch(url, stripeDelivery(delivery)).then((r) => r.status);
        const count = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM fulfilments')).rows[0].n as number;

        // A forged signature is refused before anything is claimed or applied.
        expect(await deliver({ ...event, signature: 't=1,v1=forged' })).toBe(400);
        const statuses = await Promise.all(Array.from({ length: 50 }, () => deliver()));
        expect(statuses.every((s) => s === 200 || s === 409), statuses.join(',')).toBe(true);
        expect(statuses).toContain(200);
        expect(await deliver()).toBe(200);
        expect(await count()).toBe(1);
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await db.end();
      }
    });
  });
}

/** A fixture app with one route a server-rendered form posts (a donation), and what apply must write for its framework. */
export interface FormFixture {
  /** fixtures/apply/<fixture>, and what the suite and its first test are called. */
  readonly fixture: string;
  readonly title: string;
  readonly applyTitle: string;
  /** Part of the throwaway schema's name. */
  readonly schema: string;
  /** The framework's own checks on what the first apply returned and made of src/app.ts. */
  readonly wrote: (first: ApplyResult, app: string) => void;
  /** Serves the compiled app's `createApp()`. */
  readonly serve: (createApp: () => unknown) => Promise<Running>;
}

const keyIn = (html: string) => /name="idempotencyKey" value="([^"]*)"/.exec(html)?.[1];

/** A browser's form post: urlencoded, no key header, the key in the hidden field. */
const submit = (url: string, fields: Record<string, string>) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });

/**
 * A server-rendered form's black-box check: apply --yes puts the hidden key field in views/donate.hbs and the key
 * function where the framework's templates see it (the fixture's checks), the app type-checks, a second apply changes
 * nothing; then every page carries a new key, 50 concurrent submissions of one page donate once, and a post without
 * a key (or with two) is refused.
 */
export async function formFixtureSuite(spec: FormFixture): Promise<void> {
  const skip = await postgresSkipReason();
  if (skip) console.warn(`skipped: ${skip}`);
  describe.skipIf(skip !== undefined)(spec.title, { timeout: 300_000 }, () => {
    let copy: FixtureCopy;
    let schema: AppSchema | undefined;

    beforeAll(async () => {
      copy = await copyFixture(spec.fixture);
    });
    afterAll(async () => {
      await schema?.drop();
      await copy?.remove();
    });

    it(spec.applyTitle, async () => {
      const first = await applyFirst(copy.dir);
      expect(first.changes.map((c) => c.path).sort()).toEqual(['src/app.ts', 'src/idempotency/claimTransaction.ts', 'src/idempotency/instance.ts', 'views/donate.hbs']);
      // No "ship the client change first": the form is the client, and apply changed it.
      expect(first.manual.map((m) => m.reason).join('\n')).not.toMatch(/ship the client change|hidden idempotencyKey/);
      const view = await readFile(path.join(copy.dir, 'views/donate.hbs'), 'utf8');
      expect(view).toContain('  <form method="post" action="/donations">\n    <input type="hidden" name="idempotencyKey" value="{{idempotencyKey}}">\n    <label>');
      spec.wrote(first, await readFile(path.join(copy.dir, 'src/app.ts'), 'utf8'));
      expect(await compile(copy.dir)).toBe('');

      await applyAgain(copy.dir);
    });

    it('renders a new key per page, runs 50 concurrent submissions of one page once, and answers a post without a key 400', async () => {
      schema = await createAppSchema(spec.schema, copy.migration, 'CREATE TABLE donations (id serial PRIMARY KEY, amount int NOT NULL)');
      process.env['DATABASE_URL'] = schema.url;
      const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => unknown };
      const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
      const server = await spec.serve(createApp);
      const rows = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM donations')).rows[0].n as number;
      try {
        const donations = `${server.url}/donations`;
        const page = async () => keyIn(await (await fetch(donations)).text());
        const key = await page();
        const other = await page();
        expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(other).not.toBe(key);

        const answers = await Promise.all(Array.from({ length: 50 }, () => submit(donations, { amount: '10', idempotencyKey: key! })));
        const statuses = answers.map((a) => a.status);
        // A submission still running when a duplicate arrives is waited for ("inFlight": "wait"); on a loaded machine a
        // duplicate may outwait that and get 409, or 503 when the store is busy: never a second execution.
        expect(statuses.every((s) => s === 303 || s === 409 || s === 503), statuses.join(',')).toBe(true);
        expect(statuses).toContain(303);
        expect(answers.find((a) => a.status === 303)?.headers.get('location')).toBe('/donations/thanks');
        expect(await rows()).toBe(1);

        // The same page sent again (the browser's resubmit) replays; the other page's key is another donation.
        const replay = await submit(donations, { amount: '10', idempotencyKey: key! });
        expect(replay.status).toBe(303);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect((await submit(donations, { amount: '10', idempotencyKey: other! })).status).toBe(303);
        expect(await rows()).toBe(2);

        const bare = await submit(donations, { amount: '10' });
        expect(bare.status).toBe(400);
        expect(await bare.text()).toContain('Idempotency-Key header or idempotencyKey form field');
        // Sent twice (two hidden fields), the key is refused, not picked.
        const twice = await fetch(donations, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `amount=10&idempotencyKey=${key}&idempotencyKey=${other}`, redirect: 'manual' });
        expect(twice.status).toBe(400);
        expect(await rows()).toBe(2);
      } finally {
        await server.close();
        await db.end();
      }
    });
  });
}
