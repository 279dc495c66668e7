import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import type { EndpointFinding, PaymentFinding } from '../../src/inspect/types.js';

/** Every SDK operation that changes something at the provider, raw REST calls, and the look-alikes that are not payments. */
describe('inspect payment-calls', () => {
  const root = path.resolve('fixtures/projects/payment-calls');

  it('finds each provider operation with its risk, verb and key', async () => {
    const { findings } = await inspectProject(root);
    const payments = findings.filter((f): f is PaymentFinding => f.kind === 'payment');
    expect(payments.map((p) => `${p.file}:${p.line} ${p.id} ${p.httpMethod} ${p.risk} ${p.via} key=${p.hasProviderKey}`)).toEqual([
      'src/adyenCheckout.ts:7 adyen paymentsDetails POST moves-money sdk key=true',
      'src/adyenCheckout.ts:11 adyen updateAuthorisedAmount POST moves-money sdk key=false',
      'src/otherProviders.ts:12 braintree transaction.sale POST moves-money sdk key=false',
      'src/otherProviders.ts:16 square payments.create POST moves-money sdk key=true',
      'src/otherProviders.ts:20 mollie payments.create POST moves-money sdk key=false',
      'src/otherProviders.ts:24 paddle transactions.create POST moves-money sdk key=false',
      'src/paypalClient.ts:7 paypal v1/billing/subscriptions POST billable-object http key=true',
      'src/paypalClient.ts:11 paypal v2/checkout/orders/{id}/authorize POST moves-money http key=false',
      'src/paypalRest.ts:7 paypal v2/checkout/orders POST billable-object http key=true',
      'src/paypalRest.ts:16 paypal v2/checkout/orders/{id}/capture POST moves-money http key=false',
      'src/paypalRest.ts:20 paypal v2/payments/captures/{id}/refund POST moves-money http key=false',
      'src/paypalRest.ts:24 paypal v1/payments/payouts POST moves-money http key=false',
      'src/stripeBilling.ts:6 stripe billingPortal.sessions.create POST harmless-object sdk key=false',
      'src/stripeBilling.ts:10 stripe customers.update POST billable-object sdk key=false',
      'src/stripeBilling.ts:14 stripe subscriptions.cancel DELETE billable-object sdk key=false',
      'src/stripeBilling.ts:18 stripe invoices.voidInvoice POST billable-object sdk key=true',
      'src/stripeBilling.ts:22 stripe setupIntents.create POST harmless-object sdk key=false',
      'src/stripeRest.ts:2 stripe refunds.create POST moves-money http key=true',
    ]);
  });

  it('a key made on each call (randomUUID) is not credited as protection: the SDK retries share it, a retried request does not', async () => {
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00: `{ idempotencyKey: crypto.randomUUID() }` on 15 calls.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ib-perattempt-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', dependencies: { stripe: '^20.0.0' } }));
      writeFileSync(
        path.join(dir, 'src/pay.ts'),
        `import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
const stripe = new Stripe('sk');
export const random = (amount: number) => stripe.paymentIntents.create({ amount, currency: 'eur' }, { idempotencyKey: crypto.randomUUID() });
export const stable = (orderId: string) => stripe.refunds.create({ payment_intent: orderId }, { idempotencyKey: \`refund:\${orderId}\` });
export const local = (amount: number) => {
  const idempotencyKey = randomUUID();
  return stripe.paymentIntents.create({ amount, currency: 'eur' }, { idempotencyKey });
};
`,
      );
      const { findings } = await inspectProject(dir);
      const payments = findings.filter((f): f is PaymentFinding => f.kind === 'payment');
      expect(payments.map((p) => `${p.line} ${p.operation} key=${p.hasProviderKey} perAttempt=${p.keyPerAttempt === true}`)).toEqual([
        '4 paymentIntents.create key=true perAttempt=true',
        '5 refunds.create key=true perAttempt=false',
        '8 paymentIntents.create key=true perAttempt=true',
      ]);
      expect(findings.filter((f) => f.kind === 'existing-idempotency').map((f) => f.line)).toEqual([5]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an inline handler handing the request to one service names it (delegate); SDK, database and library calls do not', async () => {
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00: a Fastify plugin gets its services in its options.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ib-delegate-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', dependencies: { fastify: '^5.0.0', stripe: '^20.0.0' } }));
      writeFileSync(
        path.join(dir, 'src/routes.ts'),
        `import { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { orderService } from './services/orders';
import { db } from './db';
export const routes = async (fastify: FastifyInstance, opts: { paymentService: { modifyPayment(x: unknown): Promise<unknown> }; fileManager: { moveOldToTemp(x: string): Promise<string>; upload(x: string): Promise<void>; moveTempToOld(x: string): Promise<void> } }) => {
  fastify.post('/payment-intents/:id', async (request, reply) => {
    const resp = await opts.paymentService.modifyPayment({ data: request.body });
    return reply.status(200).send(resp);
  });
  fastify.post('/orders', async (request) => orderService.placeOrder(request.body, randomUUID()));
  fastify.post('/notes', async (request) => db.notes.insert(JSON.parse(String(request.body))));
  // fastify/demo@1f50cc1: a side call before a transaction whose callback does the real work is not the delegate.
  fastify.post('/tasks/:id/upload', async (request) => {
    const old = await opts.fileManager.moveOldToTemp('a');
    return db.transaction(async () => {
      await opts.fileManager.upload('b');
    }).catch(async () => opts.fileManager.moveTempToOld(old));
  });
};
`,
      );
      const { findings } = await inspectProject(dir);
      const endpoints = findings.filter((f): f is EndpointFinding => f.kind === 'endpoint');
      expect(endpoints.map((e) => `${e.path} ${e.delegate ?? '-'}`)).toEqual(['/payment-intents/:id modifyPayment', '/orders placeOrder', '/notes -', '/tasks/:id/upload -']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names a handler that sends one CQRS command after the command (NestJS controller and inline route)', async () => {
    // The shape of Vegetam/microservices-ddd-kafka@afdd111: `process(dto)` runs `this.processHandler.execute(new ProcessPaymentCommand(…))`.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ib-command-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', dependencies: { '@nestjs/common': '^10.0.0', '@nestjs/cqrs': '^10.0.0', express: '^4.0.0' } }));
      writeFileSync(
        path.join(dir, 'src/payments.controller.ts'),
        `import { Body, Controller, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ProcessPaymentCommand, ProcessPaymentHandler } from './commands';
@Controller('payments')
export class PaymentsController {
  constructor(private readonly processHandler: ProcessPaymentHandler, private readonly bus: CommandBus) {}
  @Post()
  async process(@Body() dto: { orderId: string }) {
    return { id: await this.processHandler.execute(new ProcessPaymentCommand(dto.orderId)) };
  }
  @Post('batch')
  async create(@Body() dto: { ids: string[] }) {
    for (const id of dto.ids) await this.bus.execute(new ProcessPaymentCommand(id));
    await this.bus.execute(new NotifyCommand());
  }
}
declare class NotifyCommand {}
`,
      );
      writeFileSync(path.join(dir, 'src/app.ts'), `import express from 'express';
import { bus, RefundOrderCommand } from './commands';
express().post('/orders/:id/refunds', async (req, res) => res.json(await bus.dispatch(new RefundOrderCommand(req.params.id))));
`);
      const { findings } = await inspectProject(dir);
      const endpoints = findings.filter((f): f is EndpointFinding => f.kind === 'endpoint');
      expect(endpoints.map((e) => `${e.path} ${e.delegate ?? '-'}`).sort()).toEqual(['/orders/:id/refunds refundOrder', '/payments processPayment', '/payments/batch -']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ignores reads and our own data layer, services and relative URLs', async () => {
    const { findings } = await inspectProject(root);
    expect(findings.filter((f) => f.file === 'src/lookalikes.ts')).toEqual([]);
    expect(findings.some((f) => f.kind === 'payment' && /retrieve|showOrder/.test(`${f.id} ${f.enclosingFunction ?? ''}`))).toBe(false);
  });

  it('lists every provider the code calls', async () => {
    const { stack } = await inspectProject(root);
    expect(stack.payments).toEqual(['adyen', 'braintree', 'mollie', 'paddle', 'paypal', 'square', 'stripe']);
  });
});
