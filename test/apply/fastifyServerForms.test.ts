import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const keyIn = (html: string) => /name="idempotencyKey" value="([^"]*)"/.exec(html)?.[1];

/** A browser's form post: urlencoded, no key header, the key in the hidden field. */
const submit = (url: string, fields: Record<string, string>) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });

describe.skipIf(skip !== undefined)('apply on a Fastify app whose route a server-rendered form posts (@fastify/view + Handlebars)', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('fastify-forms');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it("adds the hidden key field to the form and the key function to @fastify/view's defaultContext, type-checks, and changes nothing the second time", async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/app.ts', 'src/idempotency/claimTransaction.ts', 'src/idempotency/instance.ts', 'views/donate.hbs']);
    // No "ship the client change first": the form is the client, and apply changed it.
    expect(first.manual.map((m) => m.reason).join('\n')).not.toMatch(/ship the client change|hidden idempotencyKey/);
    const view = await readFile(path.join(copy.dir, 'views/donate.hbs'), 'utf8');
    expect(view).toContain('  <form method="post" action="/donations">\n    <input type="hidden" name="idempotencyKey" value="{{idempotencyKey}}">\n    <label>');
    const app = await readFile(path.join(copy.dir, 'src/app.ts'), 'utf8');
    // The claim-writes pass adds its own name to the same import.
    expect(app).toContain("import { newIdempotencyKey, idempotencyOf } from './idempotency/index.js';\n");
    expect(app).toContain("app.post('/donations', idempotency.donate, async (request, reply) => {");
    expect(app).toContain('  app.register(view, {\n    engine: { handlebars },\n    root: views,\n    defaultContext: { idempotencyKey: newIdempotencyKey },\n  });\n');
    expect(first.edits.map((e) => e.summary)).toContain("gives the templates idempotencyKey(), a fresh key per rendered form (idempotencyKey: newIdempotencyKey in @fastify/view's defaultContext)");
    expect(await compile(copy.dir)).toBe('');

    const before = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  });

  it('renders a new key per page, runs 50 concurrent submissions of one page once, and answers a post without a key 400', async () => {
    schema = await createAppSchema('fastify_forms', copy.migration, 'CREATE TABLE donations (id serial PRIMARY KEY, amount int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => FastifyInstance };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp();
    await server.listen({ port: 0, host: '127.0.0.1' });
    const rows = async () => (await schema!.pool.query('SELECT count(*)::int AS n FROM donations')).rows[0].n as number;
    try {
      const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
      const page = async () => keyIn(await (await fetch(`${base}/donations`)).text());
      const key = await page();
      const other = await page();
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(other).not.toBe(key);

      const answers = await Promise.all(Array.from({ length: 50 }, () => submit(`${base}/donations`, { amount: '10', idempotencyKey: key! })));
      const statuses = answers.map((a) => a.status);
      // A submission still running when a duplicate arrives is waited for ("inFlight": "wait"); on a loaded machine a
      // duplicate may outwait that and get 409, or 503 when the store is busy: never a second execution.
      expect(statuses.every((s) => s === 303 || s === 409 || s === 503), statuses.join(',')).toBe(true);
      expect(statuses).toContain(303);
      expect(answers.find((a) => a.status === 303)?.headers.get('location')).toBe('/donations/thanks');
      expect(await rows()).toBe(1);

      // The same page sent again (the browser's resubmit) replays; the other page's key is another donation.
      const replay = await submit(`${base}/donations`, { amount: '10', idempotencyKey: key! });
      expect(replay.status).toBe(303);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await submit(`${base}/donations`, { amount: '10', idempotencyKey: other! })).status).toBe(303);
      expect(await rows()).toBe(2);

      const bare = await submit(`${base}/donations`, { amount: '10' });
      expect(bare.status).toBe(400);
      expect(await bare.text()).toContain('Idempotency-Key header or idempotencyKey form field');
      // Sent twice (two hidden fields), the key is refused, not picked.
      const twice = await fetch(`${base}/donations`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `amount=10&idempotencyKey=${key}&idempotencyKey=${other}`, redirect: 'manual' });
      expect(twice.status).toBe(400);
      expect(await rows()).toBe(2);
    } finally {
      await server.close();
      await db.end();
    }
  });
});
