import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** NestJS: controller prefix + global prefix + URI versioning (default, @Version, VERSION_NEUTRAL), DTO body fields, an injected Stripe client reached through a service, processors and schedules. */
describe('inspect nestjs-billing', () => {
  const root = path.resolve('fixtures/projects/nestjs-billing');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: ['nestjs'],
      databases: ['postgres'],
      orms: ['pg', 'typeorm'],
      brokers: ['bullmq'],
      testFramework: 'jest',
      packageManager: 'yarn',
      payments: ['stripe'],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'consumer',
        id: 'bullmq fulfilment',
        file: 'src/jobs/fulfilment.processor.ts',
        line: 4,
        broker: 'bullmq',
        queue: 'fulfilment',
        dedupes: false,
      },
      {
        kind: 'cron',
        id: '@nestjs/schedule ReconcileTask.reconcilePayouts',
        file: 'src/jobs/reconcile.task.ts',
        line: 6,
        scheduler: '@nestjs/schedule',
        schedule: 'CronExpression.EVERY_HOUR',
        name: 'ReconcileTask.reconcilePayouts',
        inert: true,
      },
      {
        kind: 'cron',
        id: '@nestjs/schedule retry-failed',
        file: 'src/jobs/reconcile.task.ts',
        line: 11,
        scheduler: '@nestjs/schedule',
        schedule: 'every 30000ms',
        name: 'retry-failed',
        inert: true,
      },
      {
        kind: 'endpoint',
        id: 'POST /api/v1/orders',
        insertsRecord: true,
        file: 'src/orders/orders.controller.ts',
        line: 14,
        method: 'POST',
        path: '/api/v1/orders',
        framework: 'nestjs',
        handler: 'OrdersController.create',
        prefixResolved: true,
        bodyFields: ['customerId', 'sku', 'quantity'],
        touchesPayment: true,
      },
      {
        kind: 'endpoint',
        id: 'PUT /api/v2/orders/:id/address',
        file: 'src/orders/orders.controller.ts',
        line: 19,
        method: 'PUT',
        path: '/api/v2/orders/:id/address',
        framework: 'nestjs',
        handler: 'OrdersController.changeAddress',
        prefixResolved: true,
        bodyFields: ['addressId'],
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'DELETE /api/v1/orders/:id',
        file: 'src/orders/orders.controller.ts',
        line: 25,
        method: 'DELETE',
        path: '/api/v1/orders/:id',
        framework: 'nestjs',
        handler: 'OrdersController.remove',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'existing-idempotency',
        id: 'job-id-dedupe job ship added with a deterministic jobId',
        file: 'src/orders/orders.service.ts',
        line: 21,
        mechanism: 'job-id-dedupe',
        detail: 'job ship added with a deterministic jobId',
      },
      {
        kind: 'payment',
        id: 'stripe paymentIntents.create',
        file: 'src/payments/payments.service.ts',
        line: 11,
        provider: 'stripe',
        operation: 'paymentIntents.create',
        hasProviderKey: false,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'PaymentsService.charge',
      },
      {
        kind: 'existing-idempotency',
        id: 'provider-key stripe subscriptions.create',
        file: 'src/payments/payments.service.ts',
        line: 15,
        mechanism: 'provider-key',
        detail: 'stripe subscriptions.create passes an idempotency key',
      },
      {
        kind: 'payment',
        id: 'stripe subscriptions.create',
        file: 'src/payments/payments.service.ts',
        line: 15,
        provider: 'stripe',
        operation: 'subscriptions.create',
        hasProviderKey: true,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'PaymentsService.subscribe',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/webhooks/stripe',
        file: 'src/payments/webhooks.controller.ts',
        line: 8,
        method: 'POST',
        path: '/api/webhooks/stripe',
        framework: 'nestjs',
        handler: 'WebhooksController.handle',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'webhook',
        id: 'stripe webhook POST /api/webhooks/stripe',
        file: 'src/payments/webhooks.controller.ts',
        line: 8,
        provider: 'stripe',
        verifiesSignature: true,
        dedupesEventId: false,
        route: 'POST /api/webhooks/stripe',
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
