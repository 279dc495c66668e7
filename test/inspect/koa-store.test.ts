import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Koa + @koa/router: constructor prefix, nested router.use, named routes, router.del, PayPal orders with and without PayPal-Request-Id. */
describe('inspect koa-store', () => {
  const root = path.resolve('fixtures/projects/koa-store');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: ['koa'],
      databases: ['mongodb'],
      orms: ['mongoose'],
      brokers: [],
      testFramework: 'mocha',
      packageManager: 'unknown',
      payments: ['paypal'],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'existing-idempotency',
        id: 'unique-constraint unique externalId',
        file: 'src/models.ts',
        line: 2,
        mechanism: 'unique-constraint',
        detail: 'unique externalId',
      },
      {
        kind: 'endpoint',
        id: 'PUT /api/subscriptions/:id',
        file: 'src/routes/api.ts',
        line: 9,
        method: 'PUT',
        path: '/api/subscriptions/:id',
        framework: 'koa',
        prefixResolved: true,
        bodyFields: ['plan'],
        touchesPayment: false,
      },
      {
        kind: 'existing-idempotency',
        id: 'upsert-unique findOneAndUpdate with upsert: true',
        file: 'src/routes/api.ts',
        line: 11,
        mechanism: 'upsert-unique',
        detail: 'findOneAndUpdate with upsert: true',
      },
      {
        kind: 'endpoint',
        id: 'DELETE /api/subscriptions/:id',
        file: 'src/routes/api.ts',
        line: 15,
        method: 'DELETE',
        path: '/api/subscriptions/:id',
        framework: 'koa',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'POST /api/checkout/orders',
        file: 'src/routes/checkout.ts',
        line: 7,
        method: 'POST',
        path: '/api/checkout/orders',
        framework: 'koa',
        prefixResolved: true,
        bodyFields: ['total'],
        touchesPayment: true,
      },
      {
        kind: 'existing-idempotency',
        id: 'provider-key paypal v2/checkout/orders',
        file: 'src/routes/checkout.ts',
        line: 9,
        mechanism: 'provider-key',
        detail: 'paypal v2/checkout/orders passes PayPal-Request-Id',
      },
      {
        kind: 'payment',
        id: 'paypal v2/checkout/orders',
        file: 'src/routes/checkout.ts',
        line: 9,
        provider: 'paypal',
        operation: 'v2/checkout/orders',
        hasProviderKey: true,
        risk: 'billable-object',
        httpMethod: 'POST',
        via: 'sdk',
      },
      {
        kind: 'existing-idempotency',
        id: 'idempotency-middleware reads the Idempotency-Key request header',
        file: 'src/routes/checkout.ts',
        line: 10,
        mechanism: 'idempotency-middleware',
        detail: 'reads the Idempotency-Key request header',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/checkout/orders/:id/capture',
        file: 'src/routes/checkout.ts',
        line: 15,
        method: 'POST',
        path: '/api/checkout/orders/:id/capture',
        framework: 'koa',
        prefixResolved: true,
        touchesPayment: true,
      },
      {
        kind: 'payment',
        id: 'paypal v2/checkout/orders/{id}/capture',
        file: 'src/routes/checkout.ts',
        line: 16,
        provider: 'paypal',
        operation: 'v2/checkout/orders/{id}/capture',
        hasProviderKey: false,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
