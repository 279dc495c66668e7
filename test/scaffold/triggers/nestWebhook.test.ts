import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Controller, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesignModel } from '../../../src/model/types.js';
import { generateScaffold, REFERENCE_PROFILE, type ProjectProfile } from '../../../src/scaffold/index.js';
import { triggerFiles } from '../../../src/scaffold/triggers/index.js';
import { modelFor, type Generated } from '../generateInto.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile } from './generateTriggers.js';

/**
 * Issue #18 on NestJS: a controller method hands the raw body to the webhook processor (webhooks/nestjs.ts).
 * Concurrent signed deliveries of one Stripe event run the handler once and all get 200; an app created without
 * `rawBody: true` gets a 500 naming the fix, never an unchecked event.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`NestJS webhook suite skipped: ${skip}`);
const SECRET = 'whsec_nest_test';
const stripe = new Stripe('sk_test_unused');

async function nestWebhookModel(): Promise<DesignModel> {
  return modelFor('express-stripe-payments', (raw) => {
    raw.actions = (raw.actions as Array<{ trigger: string }>).filter((action) => action.trigger === 'webhook');
    (raw.stack as Record<string, unknown>).framework = 'nestjs';
  });
}

/** A Nest app with one webhook route, decorated by hand (this test file is not compiled with decorators). */
async function webhookApp(process: Loose, nestWebhook: Loose, rawBody: boolean, platform: 'express' | 'fastify' = 'express'): Promise<{ app: INestApplication; url: string }> {
  class WebhookController {
    receive(req: Loose, res: Loose) {
      return nestWebhook(req, res, process);
    }
  }
  Req()(WebhookController.prototype, 'receive', 0);
  Res()(WebhookController.prototype, 'receive', 1);
  Post('webhooks/stripe')(WebhookController.prototype, 'receive', Object.getOwnPropertyDescriptor(WebhookController.prototype, 'receive')!);
  Controller()(WebhookController);
  class WebhookModule {}
  Module({ controllers: [WebhookController] })(WebhookModule);
  const options = { rawBody, logger: false as const };
  const app = platform === 'fastify' ? await NestFactory.create(WebhookModule, new FastifyAdapter(), options) : await NestFactory.create(WebhookModule, options);
  await app.listen(0, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}` };
}

describe.skipIf(skip !== undefined)('NestJS webhook route over the processor', () => {
  let generated: Generated;
  let schema: Schema;
  let scaffold: Record<string, Loose>;
  const closers: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await nestWebhookModel(), [], { experimentalDecorators: true, emitDecoratorMetadata: true });
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'nestwh');
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    scaffold = { ...(await load('index.js')), ...(await load('webhooks/webhooks.js')), ...(await load('webhooks/verify.js')), ...(await load('webhooks/nestjs.js')) };
    // tsc over the whole scaffold: minutes on a saturated machine.
  }, 300_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await schema?.drop();
  });

  function processor(onEvent: () => void) {
    const pool = new pg.Pool({ connectionString: schema.url, max: 10 });
    closers.push(() => pool.end());
    return scaffold.createWebhookProcessor({
      core: scaffold.createIdempotency({ pool }).core,
      action: scaffold.ACTIONS.handleStripeWebhook,
      source: scaffold.stripeSource(SECRET),
      handle: async () => onEvent(),
    });
  }

  function delivery() {
    const payload = JSON.stringify({ id: `evt_${randomUUID().slice(0, 8)}`, object: 'event', type: 'payment_intent.succeeded', created: Math.floor(Date.now() / 1000), data: { object: { id: 'pi_1', object: 'payment_intent' } } });
    return { body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) } };
  }

  it('the scaffold for a NestJS project ships webhooks/nestjs.ts and TRIGGERS.md shows the controller method and rawBody: true', async () => {
    const files = triggerFiles(await nestWebhookModel(), 'nestjs');
    expect(files.map((file) => file.path)).toContain('webhooks/nestjs.ts');
    const readme = files.find((file) => file.path === 'TRIGGERS.md')!.contents;
    expect(readme).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(readme).toContain('return nestWebhook(req, res, processHandleStripeWebhook);');
  });

  it('TRIGGERS.md shows the Fastify types in the controller method when the project runs Nest on Fastify', async () => {
    const model = await nestWebhookModel();
    const readmeFor = (profile: ProjectProfile) => generateScaffold(model, { dir: 'src/idempotency', profile }).find((file) => file.path.endsWith('/TRIGGERS.md'))!.contents;
    const fastify = readmeFor({ ...REFERENCE_PROFILE, httpPlatform: 'fastify' });
    expect(fastify).toContain('receive(@Req() req: RawBodyRequest<FastifyRequest>, @Res() res: FastifyReply) {');
    expect(fastify).toContain('new FastifyAdapter(), { rawBody: true }');
    expect(fastify).not.toContain('RawBodyRequest<Request>');
    expect(readmeFor(REFERENCE_PROFILE)).toContain('receive(@Req() req: RawBodyRequest<Request>, @Res() res: Response) {');
  });

  it('concurrent signed deliveries of one event through the controller: handled once, all 200', async () => {
    let handled = 0;
    const { app, url } = await webhookApp(processor(() => (handled += 1)), scaffold.nestWebhook, true);
    closers.push(() => app.close());
    const { body, headers } = delivery();
    const responses = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/webhooks/stripe`, { method: 'POST', headers, body })));
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 10 }, () => 200));
    expect(handled).toBe(1);
    const tampered = await fetch(`${url}/webhooks/stripe`, { method: 'POST', headers, body: body.replace('pi_1', 'pi_2') });
    expect(tampered.status).toBe(400);
  });

  it('on the Fastify platform (FastifyReply has header(), not set()): handled once, all 200, a tampered body 400', async () => {
    let handled = 0;
    const { app, url } = await webhookApp(processor(() => (handled += 1)), scaffold.nestWebhook, true, 'fastify');
    closers.push(() => app.close());
    const { body, headers } = delivery();
    const responses = await Promise.all(Array.from({ length: 5 }, () => fetch(`${url}/webhooks/stripe`, { method: 'POST', headers, body })));
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 5 }, () => 200));
    expect(handled).toBe(1);
    const tampered = await fetch(`${url}/webhooks/stripe`, { method: 'POST', headers, body: body.replace('pi_1', 'pi_2') });
    expect(tampered.status).toBe(400);
    const withoutRawBody = await webhookApp(processor(() => (handled += 1)), scaffold.nestWebhook, false, 'fastify');
    closers.push(() => withoutRawBody.app.close());
    const refused = await fetch(`${withoutRawBody.url}/webhooks/stripe`, { method: 'POST', headers, body });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toMatchObject({ error: 'raw-body-missing' });
    expect(handled).toBe(1);
  });

  it('an app created without rawBody: true refuses with a 500 naming the fix, and handles nothing', async () => {
    let handled = 0;
    const { app, url } = await webhookApp(processor(() => (handled += 1)), scaffold.nestWebhook, false);
    closers.push(() => app.close());
    const { body, headers } = delivery();
    const response = await fetch(`${url}/webhooks/stripe`, { method: 'POST', headers, body });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('rawBody: true');
    expect(handled).toBe(0);
  });
});
