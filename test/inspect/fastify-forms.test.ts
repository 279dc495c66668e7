import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Fastify route forms beyond `app.post`, tRPC mutations, and an Express webhook whose comments talk about duplicates. */
describe('inspect fastify-forms', () => {
  const root = path.resolve('fixtures/projects/fastify-forms');

  it('finds routes behind withTypeProvider, register chains, route() under a register prefix, and a GET that charges', async () => {
    const { findings } = await inspectProject(root);
    const endpoints = findings.flatMap((f) => (f.kind === 'endpoint' ? [f] : []));
    expect(endpoints.map((e) => [`${e.file}:${e.line}`, e.id, e.framework, e.prefixResolved, e.transport ?? 'http', (e.bodyFields ?? []).join(',')])).toEqual([
      ['src/payLinks.ts:8', 'GET /orders/:id/pay', 'express', false, 'http', ''],
      ['src/routes/orders.ts:4', 'POST /v1/orders/:id/refund', 'fastify', true, 'http', ''],
      ['src/routes/orders.ts:9', 'PATCH /v1/orders/:id', 'fastify', true, 'http', ''],
      ['src/routes/orders.ts:9', 'PUT /v1/orders/:id', 'fastify', true, 'http', ''],
      ['src/server.ts:8', 'POST /carts', 'fastify', true, 'http', 'sku,qty'],
      ['src/server.ts:12', 'POST /feedback', 'fastify', true, 'http', ''],
      ['src/trpc.ts:10', 'POST /billing.createInvoice', 'trpc', false, 'trpc', 'customerId,amount'],
      ['src/trpc.ts:13', 'POST /billing.subscriptions.cancel', 'trpc', false, 'trpc', 'subscriptionId'],
      ['src/webhook.ts:9', 'POST /webhooks/stripe', 'express', true, 'http', ''],
    ]);
  });

  it('does not credit a webhook with dedupe because a comment or log line says "duplicate"', async () => {
    const { findings } = await inspectProject(root);
    const webhook = findings.find((f) => f.kind === 'webhook');
    expect(webhook).toEqual({
      kind: 'webhook',
      id: 'stripe webhook POST /webhooks/stripe',
      file: 'src/webhook.ts',
      line: 9,
      provider: 'stripe',
      verifiesSignature: true,
      dedupesEventId: false,
      route: 'POST /webhooks/stripe',
    });
  });
});
