import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { collisionProbability } from '../../src/model/uniqueness.js';
import { NOW, fixtureNames, loadFixture, rawFixture } from '../helpers/fixtures.js';

const design = (name: string) => buildDesign(loadFixture(name), undefined, { now: NOW });

describe('buildDesign', () => {
  it.each(fixtureNames())('%s satisfies the seven testable constraints', (name) => {
    const model = design(name);
    expect(model.constraints).toHaveLength(7);
    expect(model.constraints.filter((c) => !c.satisfied)).toEqual([]);
  });

  it("says where a consumer's key comes from in its broker's terms: Kafka assigns no message id", () => {
    const raw = rawFixture('worker-cron-no-payments') as { stack: Record<string, unknown> };
    const carriers = (broker: string) => buildDesign(parseConfig(JSON.stringify({ ...raw, stack: { ...raw.stack, broker } })), undefined, { now: NOW }).actions.filter((a) => a.trigger === 'consumer').map((a) => a.key.carrier);
    expect(carriers('kafka').length).toBeGreaterThan(0);
    expect(carriers('kafka').every((c) => c.includes('Kafka assigns none'))).toBe(true);
    expect(carriers('bullmq').every((c) => c.includes('the BullMQ job id'))).toBe(true);
    expect(carriers('unknown').every((c) => c.includes("the broker's message id"))).toBe(true);
  });

  it('says that a SQLite store serialises several instances only on one machine sharing the file', () => {
    const raw = rawFixture('worker-cron-no-payments') as { stack: Record<string, unknown>; concurrency: string };
    const consequence = (database: string, concurrency: string) => buildDesign(parseConfig(JSON.stringify({ ...raw, concurrency, stack: { ...raw.stack, database } })), undefined, { now: NOW }).concurrency.consequence;
    expect(consequence('sqlite', 'multi-instance')).toMatch(/^Duplicates can land on different instances at the same moment\. SQLite serialises claims only between processes on one machine that open the same database file/);
    expect(consequence('sqlite', 'single-server')).not.toContain('one machine');
    expect(consequence('postgres', 'multi-instance')).toBe('Duplicates can land on different instances at the same moment; only a database constraint serialises them.');
  });

  it('is pure: the same inputs give an equal model', () => {
    expect(design('nestjs-adyen-saga')).toEqual(design('nestjs-adyen-saga'));
  });

  it('sizes each lease from its expected duration, three times over plus the skew buffer', () => {
    const model = design('express-stripe-payments');
    const createPayment = model.actions.find((a) => a.name === 'createPayment')!;
    // 800 ms × 3 + 3 s (multi-instance) = 5.4 s → rounded up to 6 s
    expect(createPayment.lockTimeoutMs).toBe(6_000);
    expect(createPayment.lockJustification).toContain('800 milliseconds');
    expect(createPayment.lockJustification).toContain('6 seconds');
    expect(createPayment.heartbeatMs).toBeUndefined();
  });

  it('gives long jobs a short lease renewed by a heartbeat instead of a long lease', () => {
    const job = design('worker-cron-no-payments').actions.find((a) => a.name === 'generateMonthlyInvoices')!;
    expect(job.heartbeatMs).toBe(10_000);
    expect(job.lockTimeoutMs).toBe(33_000);
  });

  it('raises retention to the Adyen window and says why', () => {
    const model = design('nestjs-adyen-saga');
    expect(model.retention.configuredMs).toBe(7 * 86_400_000);
    expect(model.retention.effectiveMs).toBe(31 * 86_400_000);
    expect(model.retention.raised).toBe(true);
    expect(model.retention.justification).toMatch(/raised to 31 days: Adyen/);
  });

  it('keeps a retention that already covers Stripe\'s 24 hours and webhook resends', () => {
    const model = design('express-stripe-payments');
    expect(model.retention.label).toBe('72h');
    expect(model.retention.raised).toBe(false);
  });

  it('uses 422 for a reused key by default and 409 when configured', () => {
    expect(design('minimal-one-action').responses.mismatchStatus).toBe(422);
    const raw = { ...rawFixture('minimal-one-action'), conflictStatus: 409 };
    expect(buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: NOW }).responses.mismatchStatus).toBe(409);
  });

  it('flags a derived key space that is too small for the volume with the birthday bound', () => {
    const raw = rawFixture('minimal-one-action');
    (raw['actions'] as Array<Record<string, unknown>>)[0]!['key'] = { source: 'derived', from: ['roomId', 'checkIn'], bits: 32 };
    (raw['actions'] as Array<Record<string, unknown>>)[0]!['volumePerDay'] = 50_000;
    const action = buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: NOW }).actions[0]!;
    expect(action.uniqueness.verdict).toBe('too-small');
    expect(action.uniqueness.explanation).toContain('birthday bound');
  });

  it('computes the birthday bound accurately for tiny and large probabilities', () => {
    expect(collisionProbability(1, 122)).toBe(0);
    expect(collisionProbability(1_000_000, 122)).toBeGreaterThan(0);
    expect(collisionProbability(1_000_000, 122)).toBeLessThan(1e-20);
    expect(collisionProbability(77_163, 32)).toBeCloseTo(0.5, 2);
  });

  it('derives provider keys deterministically from the local key', () => {
    const model = design('nestjs-adyen-saga');
    const adyen = model.providers.find((p) => p.id === 'adyen')!;
    expect(adyen.example.length).toBeLessThanOrEqual(64);
    const step = model.sagas[0]!.steps[1]!;
    expect(step.providerKeyExample).toBe(design('nestjs-adyen-saga').sagas[0]!.steps[1]!.providerKeyExample);
  });

  it('falls back to the PostgreSQL reference and lists assumptions when the stack is unknown', () => {
    const model = design('agnostic-unknown-stack');
    expect(model.stack.agnostic).toBe(true);
    expect(model.stack.storeDatabase).toBe('postgres');
    expect(model.assumptions.join(' ')).toMatch(/PostgreSQL reference/);
  });

  it('skips the flowchart for a single plain endpoint and draws it when there are several moving parts', () => {
    expect(design('minimal-one-action').diagrams.flowchart).toBe(false);
    expect(design('express-stripe-payments').diagrams.flowchart).toBe(true);
  });

  it('selects anti-patterns relevant to the stack', () => {
    const nest = design('nestjs-adyen-saga').antiPatterns.map((a) => a.here).join(' ');
    expect(nest).toContain('NestJS');
    const worker = design('worker-cron-no-payments').antiPatterns.map((a) => a.id);
    expect(worker).toContain('ack-before-complete');
    expect(worker).toContain('timestamp-keys');
    expect(worker).not.toContain('trust-provider');
  });

  it('credits protection the inspection found', () => {
    const model = buildDesign(loadFixture('express-stripe-payments'), {
      findings: [{ kind: 'payment', id: 'stripe.paymentIntents.create', file: 'src/routes/payments.ts', line: 51, hasProviderKey: true } as never],
    }, { now: NOW });
    expect(model.existingProtection).toEqual([{ file: 'src/routes/payments.ts', line: 51, mechanism: 'provider-key', detail: 'stripe.paymentIntents.create' }]);
    expect(model.actions.find((a) => a.name === 'createPayment')!.existing).toHaveLength(1);
  });
});
