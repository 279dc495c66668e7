import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Hono: basePath, app.route() sub-apps, app.on([...]), zValidator schemas, raw fetch to api.stripe.com with and without Idempotency-Key. */
describe('inspect hono-edge', () => {
  const root = path.resolve('fixtures/projects/hono-edge');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: ['hono'],
      databases: ['postgres'],
      orms: ['drizzle', 'postgres.js'],
      brokers: [],
      testFramework: 'vitest',
      packageManager: 'bun',
      payments: ['stripe'],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'endpoint',
        id: 'POST /api/billing/refunds',
        file: 'src/billing.ts',
        line: 7,
        method: 'POST',
        path: '/api/billing/refunds',
        framework: 'hono',
        prefixResolved: true,
        bodyFields: ['paymentIntent'],
        touchesPayment: true,
      },
      {
        // The client's key, else randomUUID(): a retry without one sends Stripe a new key, as for an SDK call.
        kind: 'payment',
        id: 'stripe refunds.create',
        file: 'src/billing.ts',
        line: 9,
        provider: 'stripe',
        operation: 'refunds.create',
        hasProviderKey: true,
        keyPerAttempt: true,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'http',
      },
      {
        kind: 'existing-idempotency',
        id: 'idempotency-middleware reads the Idempotency-Key request header',
        file: 'src/billing.ts',
        line: 11,
        mechanism: 'idempotency-middleware',
        detail: 'reads the Idempotency-Key request header',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/billing/charges/:id/capture',
        file: 'src/billing.ts',
        line: 17,
        method: 'POST',
        path: '/api/billing/charges/:id/capture',
        framework: 'hono',
        prefixResolved: true,
        touchesPayment: true,
      },
      {
        kind: 'payment',
        id: 'stripe charges.capture',
        file: 'src/billing.ts',
        line: 18,
        provider: 'stripe',
        operation: 'charges.capture',
        hasProviderKey: false,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'http',
      },
      {
        kind: 'existing-idempotency',
        id: 'unique-constraint unique requestId',
        file: 'src/db.ts',
        line: 8,
        mechanism: 'unique-constraint',
        detail: 'unique requestId',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/payouts',
        insertsRecord: true,
        file: 'src/index.ts',
        line: 11,
        method: 'POST',
        path: '/api/payouts',
        framework: 'hono',
        prefixResolved: true,
        bodyFields: ['accountId', 'amountCents'],
        touchesPayment: false,
      },
      {
        kind: 'existing-idempotency',
        id: 'upsert-unique onConflictDoNothing()',
        file: 'src/index.ts',
        line: 13,
        mechanism: 'upsert-unique',
        detail: 'onConflictDoNothing()',
      },
      {
        kind: 'endpoint',
        id: 'PATCH /api/profile',
        file: 'src/index.ts',
        line: 17,
        method: 'PATCH',
        path: '/api/profile',
        framework: 'hono',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'PUT /api/profile',
        file: 'src/index.ts',
        line: 17,
        method: 'PUT',
        path: '/api/profile',
        framework: 'hono',
        prefixResolved: true,
        touchesPayment: false,
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
