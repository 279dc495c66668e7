import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, signedStripeEvent, stripeDelivery, WEBHOOK_SECRET, type AppSchema } from './blackBox.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped: ${skip}`);

const NEXT_ROUTE = 'src/app/api/webhooks/stripe/route.ts';
const nextTarget: WiringTarget = { action: 'stripeWebhook', codeName: 'stripeWebhook', trigger: 'webhook', method: 'POST', path: '/api/webhooks/stripe', file: NEXT_ROUTE, line: 7, provider: 'stripe', scope: 'global' };
const PAGES_ROUTE = 'src/pages/api/webhooks/stripe.ts';
const pagesTarget: WiringTarget = { ...nextTarget, file: PAGES_ROUTE, line: 17 };
const nextOptions: WireSourceOptions = { framework: 'nextjs', scaffoldDir: 'src/idempotency', imports: { aliases: [], defaultExtension: '.js' }, scaffoldModules: new Set(['index', 'instance', 'webhooks/webhooks', 'webhookEvent']) };

/** 200: applied, or a duplicate of it; 409 only when the first delivery still ran after the lease (Stripe resends). */
const ANSWERED = new Set([200, 409]);

/**
 * Issue #19 / #18 beyond Express: a Fastify route and a Next.js App Router route handler that verify Stripe's
 * signature themselves get their event handling wrapped in onceForEvent after the check; the app type-checks, a
 * second apply changes nothing, and 50 signed deliveries of one event at once take effect once on each.
 */
describe.skipIf(skip !== undefined)('apply on Stripe webhooks verified in a Fastify route and a Next.js route handler', () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;

  beforeAll(async () => {
    copy = await copyFixture('fastify-webhook');
  });
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('finds the signature check and the handling inside a Pages route\'s `if (req.method === "POST")` branch (mfts/papermark)', async () => {
    const original = await readFile(path.resolve(import.meta.dirname, '../../fixtures/apply/fastify-webhook', PAGES_ROUTE), 'utf8');
    const start = original.indexOf('  const payload = await rawBody(req);');
    const end = original.lastIndexOf('}');
    const inner = original.slice(start, end).replace(/^/gm, '  ').trimEnd();
    const guarded = `${original.slice(0, start)}  if (req.method === 'POST') {\n${inner}\n  } else {\n    res.statusCode = 405;\n    res.end();\n  }\n}\n`;
    const wired = wireSource(PAGES_ROUTE, guarded, [pagesTarget], nextOptions);
    expect(wired.manual).toEqual([]);
    expect(wired.text).toContain("    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {");
    expect(wired.text.indexOf("if (req.method === 'POST') {")).toBeLessThan(wired.text.indexOf('onceForEvent(ACTIONS'));
  });

  it('wraps the handling after the signature check, type-checks, and is a no-op the second time', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.manual).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/idempotency/webhookEvent.ts', 'src/webhook.ts']);
    const fastify = await read('src/webhook.ts');
    expect(fastify.indexOf('stripe.webhooks.constructEvent(')).toBeLessThan(fastify.indexOf("onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {"));
    expect(fastify).toContain(`    const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
      if (event.type === 'payment_intent.succeeded') {
        await db.query('INSERT INTO payments (intent, via) VALUES ($1, $2)', [event.data.object.id, 'fastify']);
      }
    });
    if (answered) {
      return reply.code(answered.status).headers(answered.headers).send(answered.body);
    }
    return { received: true };`);

    // The Next.js route handler, through the same transform (the Next fixture's own apply covers the project pass).
    const route = await read(NEXT_ROUTE);
    const wired = wireSource(NEXT_ROUTE, route, [nextTarget], nextOptions);
    expect(wired.manual).toEqual([]);
    expect(wired.edits.map((e) => e.summary)).toEqual([expect.stringContaining('once per event id (onceForEvent), after the signature check')]);
    expect(wired.text).toContain("import { onceForEvent } from '../../../../idempotency/webhookEvent.js';");
    expect(wired.text).toContain('    return new Response(answered.body, { status: answered.status, headers: answered.headers });\n  }\n  return Response.json({ received: true });');
    expect(wireSource(NEXT_ROUTE, wired.text, [nextTarget], { ...nextOptions, anyLine: true }).text).toBe(wired.text);
    await writeFile(path.join(copy.dir, NEXT_ROUTE), wired.text);

    // A Pages API route (boxyhq/saas-starter-kit's shape): answered through its Node response.
    const pages = wireSource(PAGES_ROUTE, await read(PAGES_ROUTE), [pagesTarget], nextOptions);
    expect(pages.manual).toEqual([]);
    expect(pages.edits.map((e) => e.summary)).toEqual([expect.stringContaining('of the Pages API route /api/webhooks/stripe once per event id (onceForEvent)')]);
    expect(pages.text).toContain(`  const answered = await onceForEvent(ACTIONS.stripeWebhook, 'stripe', event, async () => {
    if (event.type === 'payment_intent.succeeded') {
      await db.query('INSERT INTO payments (intent, via) VALUES ($1, $2)', [event.data.object.id, 'pages']);
    }
  });
  if (answered) {
    res.statusCode = answered.status;
    for (const [name, value] of Object.entries(answered.headers)) res.setHeader(name, value);
    res.end(answered.body);
    return;
  }
  res.setHeader('content-type', 'application/json');`);
    expect(wireSource(PAGES_ROUTE, pages.text, [pagesTarget], { ...nextOptions, anyLine: true }).text).toBe(pages.text);
    await writeFile(path.join(copy.dir, PAGES_ROUTE), pages.text);

    expect(await compile(copy.dir)).toBe('');
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    // Two applies and a tsc of the app: minutes on a saturated machine.
  }, 300_000);

  it('applies an event delivered 50 times at once exactly once on each route, answering every delivery', async () => {
    schema = await createAppSchema('webhook', copy.migration, 'CREATE TABLE payments (id serial PRIMARY KEY, intent text NOT NULL, via text NOT NULL)');
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    const load = async <T>(file: string) => (await import(pathToFileURL(path.join(copy.dir, 'dist/src', file)).href)) as T;
    const { buildWebhookApp } = await load<{ buildWebhookApp: (secret: string) => FastifyInstance }>('webhook.js');
    const { POST } = await load<{ POST: (request: Request) => Promise<Response> }>('app/api/webhooks/stripe/route.js');
    const { db } = await load<{ db: Pool }>('db.js');
    const pagesHandler = (await load<{ default: (req: IncomingMessage, res: ServerResponse) => Promise<void> }>('pages/api/webhooks/stripe.js')).default;
    const pagesServer = createServer((req, res) => void pagesHandler(req, res));
    await new Promise<void>((resolve) => pagesServer.listen(0, '127.0.0.1', resolve));
    const pagesAddress = `http://127.0.0.1:${(pagesServer.address() as AddressInfo).port}`;
    const count = async (via: string) => (await schema!.pool.query('SELECT count(*)::int AS n FROM payments WHERE via = $1', [via])).rows[0].n as number;
    const app = buildWebhookApp(WEBHOOK_SECRET);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const fastifyEvent = signedStripeEvent('evt_fastify_1');
      const toFastify = (delivery = fastifyEvent) => fetch(`${address}/webhooks/stripe`, stripeDelivery(delivery)).then((r) => r.status);
      const nextEvent = signedStripeEvent('evt_next_1');
      const toNext = (delivery = nextEvent) => POST(new Request('http://localhost/api/webhooks/stripe', stripeDelivery(delivery))).then((r) => r.status);

      // A forged signature is refused before anything is claimed or applied.
      expect(await toFastify({ ...fastifyEvent, signature: 't=1,v1=forged' })).toBe(400);
      expect(await toNext({ ...nextEvent, signature: 't=1,v1=forged' })).toBe(400);

      const pagesEvent = signedStripeEvent('evt_pages_1');
      const toPages = (delivery = pagesEvent) => fetch(`${pagesAddress}/api/webhooks/stripe`, stripeDelivery(delivery)).then((r) => r.status);
      expect(await toPages({ ...pagesEvent, signature: 't=1,v1=forged' })).toBe(400);

      const [fastifyStatuses, nextStatuses, pagesStatuses] = await Promise.all([Promise.all(Array.from({ length: 50 }, () => toFastify())), Promise.all(Array.from({ length: 50 }, () => toNext())), Promise.all(Array.from({ length: 50 }, () => toPages()))]);
      for (const statuses of [fastifyStatuses, nextStatuses, pagesStatuses]) {
        expect(statuses.every((s) => ANSWERED.has(s)), statuses.join(',')).toBe(true);
        expect(statuses).toContain(200);
      }
      expect(await toFastify()).toBe(200);
      expect(await toNext()).toBe(200);
      expect(await count('fastify')).toBe(1);
      expect(await count('next')).toBe(1);
      expect(await toPages()).toBe(200);
      expect(await count('pages')).toBe(1);
    } finally {
      await new Promise((resolve) => pagesServer.close(resolve));
      await app.close();
      await db.end();
    }
  });
});
