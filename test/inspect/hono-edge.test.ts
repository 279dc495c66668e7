import { describeFixtureInspection, endpoint, stackOf } from './fixtureInspection.js';

/** Hono: basePath, app.route() sub-apps, app.on([...]), zValidator schemas, raw fetch to api.stripe.com with and without Idempotency-Key. */
describeFixtureInspection('hono-edge', {
  stack: stackOf({ frameworks: ['hono'], databases: ['postgres'], orms: ['drizzle', 'postgres.js'], payments: ['stripe'], testFramework: 'vitest', packageManager: 'bun' }),
  findings: [
    endpoint('hono', 'POST /api/billing/refunds', 'src/billing.ts:7', { bodyFields: ['paymentIntent'], touchesPayment: true }),
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
    endpoint('hono', 'POST /api/billing/charges/:id/capture', 'src/billing.ts:17', { touchesPayment: true }),
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
    endpoint('hono', 'POST /api/payouts', 'src/index.ts:11', { insertsRecord: true, bodyFields: ['accountId', 'amountCents'] }),
    {
      kind: 'existing-idempotency',
      id: 'upsert-unique onConflictDoNothing()',
      file: 'src/index.ts',
      line: 13,
      mechanism: 'upsert-unique',
      detail: 'onConflictDoNothing()',
    },
    endpoint('hono', 'PATCH /api/profile', 'src/index.ts:17'),
    endpoint('hono', 'PUT /api/profile', 'src/index.ts:17'),
  ],
});
