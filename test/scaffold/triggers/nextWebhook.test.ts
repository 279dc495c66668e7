import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesignModel } from '../../../src/model/types.js';
import { triggerFiles } from '../../../src/scaffold/triggers/index.js';
import { modelFor, type Generated } from '../generateInto.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile } from './generateTriggers.js';

/**
 * Issue #18 on Next.js: an App Router route handler hands the raw bytes to the webhook processor (webhooks/next.ts).
 * Concurrent signed deliveries of one Stripe event run the handler once and all get 200; a tampered body is 400 and
 * an oversized one 413, neither reaching the handler.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`Next.js webhook suite skipped: ${skip}`);
const SECRET = 'whsec_next_test';
const stripe = new Stripe('sk_test_unused');

async function nextWebhookModel(): Promise<DesignModel> {
  return modelFor('express-stripe-payments', (raw) => {
    raw.actions = (raw.actions as Array<{ trigger: string }>).filter((action) => action.trigger === 'webhook');
    (raw.stack as Record<string, unknown>).framework = 'nextjs';
  });
}

describe.skipIf(skip !== undefined)('Next.js App Router webhook route over the processor', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Record<string, Loose>;
  const closers: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await nextWebhookModel(), []);
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'nextwh');
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    scaffold = { ...(await load('index.js')), ...(await load('webhooks/webhooks.js')), ...(await load('webhooks/verify.js')), ...(await load('webhooks/next.js')) };
    // tsc over the whole scaffold: minutes on a saturated machine.
  }, 300_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await schema?.drop();
  });

  function route(onEvent: () => void, bodyLimit?: number): (request: Request) => Promise<Response> {
    const pool = new pg.Pool({ connectionString: schema.url, max: 10 });
    closers.push(() => pool.end());
    const process = scaffold.createWebhookProcessor({
      core: scaffold.createIdempotency({ pool }).core,
      action: scaffold.ACTIONS.handleStripeWebhook,
      source: scaffold.stripeSource(SECRET),
      handle: async () => onEvent(),
    });
    return scaffold.nextWebhook(process, bodyLimit);
  }

  function delivery(body = JSON.stringify({ id: `evt_${randomUUID().slice(0, 8)}`, object: 'event', type: 'payment_intent.succeeded', created: Math.floor(Date.now() / 1000), data: { object: { id: 'pi_1', object: 'payment_intent' } } })) {
    const signature = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    return (payload = body) => new Request('http://localhost/api/webhooks/stripe', { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
  }

  it('the scaffold for a Next.js project ships webhooks/next.ts and TRIGGERS.md shows the route handler', async () => {
    const files = triggerFiles(await nextWebhookModel(), 'next');
    expect(files.map((file) => file.path)).toContain('webhooks/next.ts');
    const readme = files.find((file) => file.path === 'TRIGGERS.md')!.contents;
    expect(readme).toContain('export const POST = nextWebhook(processHandleStripeWebhook);');
    expect(readme).toContain("export const runtime = 'nodejs';");
  });

  it('concurrent signed deliveries of one event: handled once, all 200; tampered 400, oversized 413', async () => {
    let handled = 0;
    const POST = route(() => (handled += 1));
    const request = delivery();
    const responses = await Promise.all(Array.from({ length: 10 }, () => POST(request())));
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 10 }, () => 200));
    expect(await responses[0]!.json()).toMatchObject({ received: true });
    expect(handled).toBe(1);
    const tampered = await POST(request((await request().text()).replace('pi_1', 'pi_2')));
    expect(tampered.status).toBe(400);
    const small = route(() => (handled += 1), 16);
    expect((await small(delivery()())).status).toBe(413);
    expect(handled).toBe(1);
  });
});
