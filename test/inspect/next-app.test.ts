import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';

/** Next.js: app-router route.ts exports (function, const, export-as), pages/api with method checks, route groups and dynamic segments, a webhook, vercel.json crons; pages and client components are not findings. */
describe('inspect next-app', () => {
  const root = path.resolve('fixtures/projects/next-app');

  it('reports the stack', async () => {
    const inspection = await inspectProject(root);
    expect(inspection.root).toBe(root);
    expect(inspection.stack).toEqual({
      language: 'typescript',
      frameworks: ['nextjs'],
      databases: [],
      orms: ['prisma'],
      brokers: [],
      testFramework: 'vitest',
      packageManager: 'unknown',
      payments: ['stripe'],
    });
  });

  it('finds exactly what a reviewer would list', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings).toEqual([
      {
        kind: 'endpoint',
        id: 'PATCH /api/orders/:id',
        file: 'src/app/api/orders/[id]/route.ts',
        line: 4,
        method: 'PATCH',
        path: '/api/orders/:id',
        framework: 'nextjs',
        handler: 'PATCH',
        prefixResolved: true,
        bodyFields: ['note'],
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'DELETE /api/orders/:id',
        file: 'src/app/api/orders/[id]/route.ts',
        line: 13,
        method: 'DELETE',
        path: '/api/orders/:id',
        framework: 'nextjs',
        handler: 'remove',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'endpoint',
        id: 'POST /api/orders',
        file: 'src/app/api/orders/route.ts',
        line: 8,
        method: 'POST',
        path: '/api/orders',
        framework: 'nextjs',
        handler: 'POST',
        prefixResolved: true,
        bodyFields: ['amount', 'currency', 'email'],
        touchesPayment: true,
      },
      {
        kind: 'payment',
        id: 'stripe checkout.sessions.create',
        file: 'src/app/api/orders/route.ts',
        line: 10,
        provider: 'stripe',
        operation: 'checkout.sessions.create',
        hasProviderKey: false,
        risk: 'harmless-object',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'POST',
      },
      {
        kind: 'endpoint',
        id: 'POST /api/webhooks/stripe',
        file: 'src/app/api/webhooks/stripe/route.ts',
        line: 5,
        method: 'POST',
        path: '/api/webhooks/stripe',
        framework: 'nextjs',
        handler: 'POST',
        prefixResolved: true,
        touchesPayment: false,
      },
      {
        kind: 'webhook',
        id: 'stripe webhook POST /api/webhooks/stripe',
        file: 'src/app/api/webhooks/stripe/route.ts',
        line: 5,
        provider: 'stripe',
        verifiesSignature: true,
        dedupesEventId: true,
        route: 'POST /api/webhooks/stripe',
        dedupeEvidence: {
          file: 'src/app/api/webhooks/stripe/route.ts',
          line: 8,
          detail: 'store lookup keyed by the id: const seen = await prisma.processedEvent.findUnique({ where: { id: event.id } });',
        },
      },
      {
        kind: 'endpoint',
        id: 'POST /api/legacy/refund',
        file: 'src/pages/api/legacy/refund.ts',
        line: 4,
        method: 'POST',
        path: '/api/legacy/refund',
        framework: 'nextjs',
        handler: 'handler',
        prefixResolved: true,
        bodyFields: ['paymentIntent'],
        touchesPayment: true,
      },
      {
        kind: 'payment',
        id: 'stripe refunds.create',
        file: 'src/pages/api/legacy/refund.ts',
        line: 6,
        provider: 'stripe',
        operation: 'refunds.create',
        hasProviderKey: false,
        risk: 'moves-money',
        httpMethod: 'POST',
        via: 'sdk',
        enclosingFunction: 'handler',
      },
      {
        kind: 'cron',
        id: 'vercel /api/cron/settle',
        file: 'vercel.json',
        line: 1,
        scheduler: 'vercel',
        name: '/api/cron/settle',
        schedule: '0 3 * * *',
      },
    ]);
    expect(warnings).toEqual([]);
  });
});
