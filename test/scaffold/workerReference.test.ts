import { describe, expect, it } from 'vitest';
import { referenceNote } from '../../src/generate.js';
import { documentExcerpts, generateScaffold, referenceTarget } from '../../src/scaffold/index.js';
import { missingDependencies } from '../../src/scaffold/placement/installCommands.js';
import { modelFor } from './generateInto.js';

/**
 * A kafkajs worker with no web framework and no database the code names (CralosMejia/TrabajoKafkaIntegraci-n's
 * shape): the design is technology-agnostic on the PostgreSQL reference, but the scaffold keeps the project's own
 * (lack of a) framework. It used to get the Express adapter, its test app and a hint to install @types/express.
 */
describe('reference scaffold for a stack with a known framework and an unknown database', () => {
  it('a worker without a web framework gets the plain wrapper on PostgreSQL, nothing of Express', async () => {
    const model = await modelFor('worker-cron-no-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { database: 'unknown', broker: 'kafka' }));
    expect(model.stack.agnostic).toBe(true);
    expect(referenceTarget(model.stack)?.id).toBe('typescript-plain-postgres');
    const files = generateScaffold(model, { dir: 'src/idempotency', reference: true });
    const paths = files.map((file) => file.path);
    expect(paths).toContain('src/idempotency/plain.ts');
    expect(paths).toContain('src/idempotency/consumers/kafka.ts');
    expect(paths).not.toContain('src/idempotency/express.ts');
    const { runtime, dev } = missingDependencies(files, new Set(['kafkajs']), true);
    expect([...runtime, ...dev].filter((name) => name.includes('express'))).toEqual([]);
  });

  it('a stack whose framework is unknown too still gets the Express reference', async () => {
    const model = await modelFor('agnostic-unknown-stack');
    expect(referenceTarget(model.stack)?.id).toBe('typescript-express-postgres');
    expect(generateScaffold(model, { dir: 'src/idempotency', reference: true }).map((file) => file.path)).toContain('src/idempotency/express.ts');
  });

  it('a stack whose own adapter has no JavaScript form (Fastify in JavaScript, on SQLite) still gets the reference, never a document only', async () => {
    const model = await modelFor('fastify-bookings-stripe', (raw) => Object.assign(raw.stack as Record<string, unknown>, { language: 'javascript', database: 'sqlite' }));
    expect(referenceTarget(model.stack)?.id).toBe('typescript-express-postgres');
  });

  it('an unknown framework whose actions are all GraphQL / tRPC / jobs gets the plain wrapper; one HTTP route or webhook keeps Express', async () => {
    const rpc = (transport: string) => (raw: Record<string, unknown>) => {
      for (const action of raw.actions as Array<Record<string, unknown>>) action.transport = transport;
    };
    const graphql = await modelFor('agnostic-unknown-stack', rpc('graphql'));
    expect(referenceTarget(graphql.stack, graphql.actions)?.id).toBe('typescript-plain-postgres');
    // Without the reference flag too (the document's excerpts when scaffolding is off): never the Express adapter.
    const paths = generateScaffold(graphql, { dir: 'src/idempotency' }).map((file) => file.path);
    expect(paths).toContain('src/idempotency/plain.ts');
    expect(paths).not.toContain('src/idempotency/express.ts');
    expect(Object.values(documentExcerpts(graphql, { dir: 'src/idempotency' })).map((e) => e.path)).not.toContain('src/idempotency/express.ts');
    expect(referenceNote(graphql, 'src/idempotency', 'plain')).toContain('No action is a plain HTTP route (they are GraphQL mutations), so src/idempotency holds the plain idempotent(fn) wrapper (plain)');
    expect(graphql.assumptions.join('\n')).toContain('the code is the plain idempotent(fn) wrapper');

    const trpcAndCron = await modelFor('agnostic-unknown-stack', (raw) => {
      const [action] = raw.actions as Array<Record<string, unknown>>;
      raw.actions = [{ ...action, transport: 'trpc' }, { ...action, name: 'nightlyPayouts', trigger: 'cron', route: undefined }];
      Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', database: 'mysql' });
    });
    expect(referenceTarget(trpcAndCron.stack, trpcAndCron.actions)?.id).toBe('typescript-plain-postgres');
    expect(referenceNote(trpcAndCron, 'src/idempotency', 'plain')).toMatch(/\(they are tRPC procedures and cron jobs\).*; it runs on PostgreSQL, the reference store, to adapt to MySQL/);

    const http = await modelFor('agnostic-unknown-stack');
    expect(referenceTarget(http.stack, http.actions)?.id).toBe('typescript-express-postgres');
    expect(referenceNote(http, 'src/idempotency', 'Express')).toContain('holds the reference target instead (Express)');
    const webhook = await modelFor('agnostic-unknown-stack', (raw) => {
      const [action] = raw.actions as Array<Record<string, unknown>>;
      raw.actions = [{ ...action, transport: 'graphql' }, { ...action, name: 'stripeWebhook', trigger: 'webhook' }];
    });
    expect(referenceTarget(webhook.stack, webhook.actions)?.id).toBe('typescript-express-postgres');
  });
});
