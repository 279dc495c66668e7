import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Fastify: autoload directories with options.prefix and autoPrefix, register() prefixes, inline plugins, route({ method: [...] }), Adyen with and without idempotencyKey. */
describe('inspect fastify-api', () => {
  const root = path.resolve('fixtures/projects/fastify-api');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: ['fastify'],
      databases: ['postgres'],
      orms: ['prisma'],
      brokers: [],
      testFramework: 'jest',
      packageManager: 'pnpm',
      payments: ['adyen'],
      // Where the code creates its database client: apply's instance reads the same variables.
      connections: [{ store: 'postgres', url: 'DATABASE_URL', file: 'prisma/schema.prisma', line: 3 }],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'existing-idempotency',
        id: 'unique-constraint unique idempotencyKey',
        file: 'prisma/schema.prisma',
        line: 8,
        mechanism: 'unique-constraint',
        detail: 'unique idempotencyKey',
      },
      {
        kind: 'endpoint',
        id: 'POST /checkout/payments',
        file: 'src/checkout.ts',
        line: 14,
        method: 'POST',
        path: '/checkout/payments',
        framework: 'fastify',
        prefixResolved: true,
        bodyFields: ['amountMinor', 'currency', 'reference'],
        touchesPayment: true,
      },
      {
        kind: 'existing-idempotency',
        id: 'provider-key adyen payments',
        file: 'src/checkout.ts',
        line: 16,
        mechanism: 'provider-key',
        detail: 'adyen payments passes an idempotency key',
      },
      {
        kind: 'payment',
        id: 'adyen payments',
        file: 'src/checkout.ts',
        line: 16,
        provider: 'adyen',
        operation: 'payments',
        hasProviderKey: true,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'checkoutRoutes',
      },
      {
        kind: 'endpoint',
        id: 'POST /checkout/sessions',
        file: 'src/checkout.ts',
        line: 22,
        method: 'POST',
        path: '/checkout/sessions',
        framework: 'fastify',
        prefixResolved: true,
        touchesPayment: true,
      },
      {
        kind: 'payment',
        id: 'adyen sessions',
        file: 'src/checkout.ts',
        line: 23,
        provider: 'adyen',
        operation: 'sessions',
        hasProviderKey: false,
        risk: 'harmless-object',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'checkoutRoutes',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/orders',
        insertsRecord: true,
        file: 'src/routes/orders/index.ts',
        line: 5,
        method: 'POST',
        path: '/api/orders',
        framework: 'fastify',
        prefixResolved: true,
        bodyFields: ['sku', 'quantity'],
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'PATCH /api/orders/:id',
        file: 'src/routes/orders/index.ts',
        line: 9,
        method: 'PATCH',
        path: '/api/orders/:id',
        framework: 'fastify',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'POST /api/money-back',
        file: 'src/routes/refunds/index.ts',
        line: 7,
        method: 'POST',
        path: '/api/money-back',
        framework: 'fastify',
        prefixResolved: true,
        bodyFields: ['paymentId'],
        touchesPayment: false,
      },
      {
        kind: 'existing-idempotency',
        id: 'upsert-unique refund.upsert by paymentId',
        file: 'src/routes/refunds/index.ts',
        line: 9,
        mechanism: 'upsert-unique',
        detail: 'refund.upsert by paymentId',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/feedback',
        file: 'src/routes/root.ts',
        line: 5,
        method: 'POST',
        path: '/api/feedback',
        framework: 'fastify',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'POST /v2/carts/:id',
        file: 'src/server.ts',
        line: 13,
        method: 'POST',
        path: '/v2/carts/:id',
        framework: 'fastify',
        prefixResolved: true,
        bodyFields: ['items', 'couponCode'],
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'PUT /v2/carts/:id',
        file: 'src/server.ts',
        line: 13,
        method: 'PUT',
        path: '/v2/carts/:id',
        framework: 'fastify',
        prefixResolved: true,
        bodyFields: ['items', 'couponCode'],
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'DELETE /sessions/:id',
        file: 'src/server.ts',
        line: 23,
        method: 'DELETE',
        path: '/sessions/:id',
        framework: 'fastify',
        prefixResolved: true,
        touchesPayment: false,
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
