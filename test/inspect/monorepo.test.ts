import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** npm workspaces: per-package stack facts, imports between packages, package names on findings, UI packages ignored. */
describe('inspect monorepo', () => {
  const root = path.resolve('fixtures/projects/monorepo');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      authentication: [],
      frameworks: ['express', 'nextjs'],
      databases: ['postgres'],
      orms: ['pg'],
      brokers: ['bullmq'],
      testFramework: 'vitest',
      packageManager: 'npm',
      payments: ['stripe'],
      packages: [
        {
          dir: 'apps/api',
          name: '@acme/api',
          stack: {
            language: 'typescript',
            authentication: [],
            frameworks: ['express'],
            databases: ['postgres'],
            orms: ['pg'],
            brokers: [],
            testFramework: 'vitest',
            packageManager: 'npm',
            payments: [],
          },
        },
        {
          dir: 'apps/web',
          name: '@acme/web',
          stack: {
            language: 'typescript',
            authentication: [],
            frameworks: ['nextjs'],
            databases: [],
            orms: [],
            brokers: [],
            testFramework: 'vitest',
            packageManager: 'npm',
            payments: [],
          },
        },
        {
          dir: 'apps/worker',
          name: '@acme/worker',
          stack: {
            language: 'typescript',
            authentication: [],
            frameworks: [],
            databases: [],
            orms: [],
            brokers: ['bullmq'],
            testFramework: 'vitest',
            packageManager: 'npm',
            payments: [],
          },
        },
        {
          dir: 'packages/payments',
          name: '@acme/payments',
          stack: {
            language: 'typescript',
            authentication: [],
            frameworks: [],
            databases: [],
            orms: [],
            brokers: [],
            testFramework: 'vitest',
            packageManager: 'npm',
            payments: ['stripe'],
          },
        },
        {
          dir: 'packages/ui',
          name: '@acme/ui',
          stack: {
            language: 'typescript',
            authentication: [],
            frameworks: [],
            databases: [],
            orms: [],
            brokers: [],
            testFramework: 'vitest',
            packageManager: 'npm',
            payments: [],
          },
        },
      ],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'endpoint',
        id: 'POST /charges',
        file: 'apps/api/src/server.ts',
        line: 6,
        method: 'POST',
        path: '/charges',
        framework: 'express',
        prefixResolved: true,
        bodyFields: ['customerId', 'amount'],
        touchesPayment: true,
        package: '@acme/api',
      },
      {
        kind: 'existing-idempotency',
        id: 'idempotency-middleware reads the Idempotency-Key request header',
        file: 'apps/api/src/server.ts',
        line: 8,
        mechanism: 'idempotency-middleware',
        detail: 'reads the Idempotency-Key request header',
        package: '@acme/api',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/subscribe',
        file: 'apps/web/app/api/subscribe/route.ts',
        line: 3,
        method: 'POST',
        path: '/api/subscribe',
        framework: 'nextjs',
        handler: 'POST',
        prefixResolved: true,
        bodyFields: ['customerId', 'priceId'],
        touchesPayment: true,
        package: '@acme/web',
      },
      {
        kind: 'consumer',
        id: 'bullmq invoices',
        file: 'apps/worker/src/index.ts',
        line: 4,
        broker: 'bullmq',
        queue: 'invoices',
        dedupes: false,
        package: '@acme/worker',
      },
      {
        kind: 'cron',
        id: 'node-cron hourly-sweep',
        file: 'apps/worker/src/index.ts',
        line: 8,
        scheduler: 'node-cron',
        schedule: '0 * * * *',
        name: 'hourly-sweep',
        inert: true,
        package: '@acme/worker',
      },
      {
        kind: 'existing-idempotency',
        id: 'provider-key stripe paymentIntents.create',
        file: 'packages/payments/src/charge.ts',
        line: 6,
        mechanism: 'provider-key',
        detail: 'stripe paymentIntents.create passes an idempotency key',
        package: '@acme/payments',
      },
      {
        kind: 'payment',
        id: 'stripe paymentIntents.create',
        file: 'packages/payments/src/charge.ts',
        line: 6,
        provider: 'stripe',
        operation: 'paymentIntents.create',
        hasProviderKey: true,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'chargeCustomer',
        package: '@acme/payments',
      },
      {
        kind: 'payment',
        id: 'stripe subscriptions.create',
        file: 'packages/payments/src/subscriptions.ts',
        line: 6,
        provider: 'stripe',
        operation: 'subscriptions.create',
        hasProviderKey: false,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'startSubscription',
        package: '@acme/payments',
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
