import { describe, expect, it } from 'vitest';
import { generateScaffold, referenceTarget } from '../../src/scaffold/index.js';
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
});
