import { describe, expect, it } from 'vitest';
import { documentExcerpts, generateScaffold } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';

describe('generateScaffold (pure)', () => {
  it('places every file under the scaffold dir with its class and role, deterministically', async () => {
    const model = await modelFor('express-stripe-payments');
    const files = generateScaffold(model, { dir: './src/idempotency/' });
    expect(files.every((file) => file.path.startsWith('src/idempotency/'))).toBe(true);
    const roles = new Set(files.map((file) => file.role));
    for (const role of ['ddl', 'store', 'core', 'middleware', 'fingerprint', 'providers', 'saga', 'cleanup', 'metrics', 'alerts', 'tests', 'readme']) expect(roles).toContain(role);
    expect(files.filter((file) => file.class === 'managed').map((file) => file.path)).toEqual(['src/idempotency/idempotency-alerts.yml']);
    expect(generateScaffold(model, { dir: 'src/idempotency' })).toEqual(files);
    expect(() => generateScaffold(model, { dir: '../outside' })).toThrow(/inside the project/);
  });

  it('generates provider helpers only for the providers in the design, with the PayPal namespace from the design', async () => {
    const stripeOnly = generateScaffold(await modelFor('express-stripe-payments'), { dir: 'x' }).find((file) => file.role === 'providers')!;
    expect(stripeOnly.contents).toContain('idempotencyKey');
    expect(stripeOnly.contents).not.toMatch(/adyen|paypal/i);

    const model = await modelFor('nestjs-adyen-saga', (raw) => {
      (raw.stack as Record<string, unknown>).framework = 'express';
      raw.payments = ['adyen', 'paypal'];
    });
    const providers = generateScaffold(model, { dir: 'x' }).find((file) => file.role === 'providers')!.contents;
    expect(providers).toContain('export function adyenIdempotency');
    expect(providers).toContain('export function paypalRequestId');
    expect(providers).not.toContain('stripe');
    const paypal = model.providers.find((provider) => provider.id === 'paypal')!;
    expect(providers).toContain(`'${paypal.namespace}'`);
  });

  it('keeps the DDL guarantees: composite primary key, status CHECK, fencing, both partial indexes', async () => {
    const ddl = generateScaffold(await modelFor('express-stripe-payments'), { dir: 'x' }).find((file) => file.role === 'ddl')!.contents;
    expect(ddl).toContain('PRIMARY KEY (scope, key)');
    expect(ddl).toMatch(/CHECK \(status IN \('PROCESSING', 'COMPLETED', 'FAILED'\)\)/);
    expect(ddl).toContain('fencing_token');
    expect(ddl).toContain("WHERE status <> 'PROCESSING'");
    expect(ddl).toContain("WHERE status = 'PROCESSING'");
    expect(ddl).toContain('response_body    bytea');
  });

  it('registers every metric the alert rules query', async () => {
    const model = await modelFor('express-stripe-payments');
    const files = generateScaffold(model, { dir: 'x' });
    // HTTP metric names live in settings.ts; each trigger's (webhooks/, consumers/, cron/) in its own metrics module.
    const settings = files.filter((file) => file.path === 'x/settings.ts' || /\/(webhooks|consumers|cron)\/metrics\.ts$/.test(file.path)).map((file) => file.contents).join('\n');
    const alerts = files.find((file) => file.role === 'alerts')!.contents;
    const queried = new Set([...alerts.matchAll(/\b(idempotency_[a-z_]+)/g)].map((match) => match[1]!.replace(/_(bucket|sum|count)$/, '')));
    expect(queried.size).toBeGreaterThan(5);
    for (const name of queried) expect(settings, name).toContain(`'${name}'`);
  });

  it('returns the generated code as document excerpts, and nothing for stacks it does not generate', async () => {
    const model = await modelFor('express-stripe-payments');
    const excerpts = documentExcerpts(model, { dir: 'src/idempotency' });
    const files = generateScaffold(model, { dir: 'src/idempotency' });
    for (const id of ['ddl', 'middleware', 'fingerprint', 'cleanup', 'tests', 'monitoring'] as const) {
      const excerpt = excerpts[id]!;
      expect(files.find((file) => file.path === excerpt.path)?.contents).toBe(excerpt.code);
    }
    // Koa has a target on PostgreSQL; on a document store nothing has one yet.
    const koa = await modelFor('minimal-one-action', (raw) => void Object.assign(raw.stack as Record<string, unknown>, { framework: 'koa', database: 'mongodb' }));
    expect(documentExcerpts(koa)).toEqual({});
    expect(generateScaffold(koa, { dir: 'x' })).toEqual([]);
  });

  it('never writes keys or bodies to logs', async () => {
    const files = generateScaffold(await modelFor('express-stripe-payments'), { dir: 'x' });
    const runtime = files.filter((file) => file.path.endsWith('.ts') && file.role !== 'tests');
    for (const file of runtime) expect(file.contents, file.path).not.toMatch(/console\.(log|info|warn|error)\([^)]*\b(key|fingerprint|body)\b/);
  });
});
