import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCEPT, type ScriptStep } from '../../src/questions/scriptedPrompter.js';
import { projectFrom, readConfig, runWizard } from './wizardHarness.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

/** Nothing to read: Q1 and Q2 are asked, asked once more with examples, then the agnostic design is produced. */
const UNKNOWN_EVERYTHING: ScriptStep[] = [
  { id: 'format', answer: 'md' },
  { id: 'output', answer: ACCEPT },
  { id: 'actions:describe', answer: '' },
  { id: 'actions:describe-again', answer: '' },
  { id: 'stack:language', answer: 'unknown' },
  { id: 'stack:framework', answer: 'unknown' },
  { id: 'stack:database', answer: 'unknown' },
  { id: 'stack:language:again', answer: 'unknown' },
  { id: 'stack:framework:again', answer: 'unknown' },
  { id: 'stack:database:again', answer: 'unknown' },
  { id: 'retrySources', answer: ACCEPT },
  { id: 'payments', answer: [] },
  { id: 'concurrency', answer: 'single-server' },
  { id: 'retention', answer: '24h' },
  { id: 'detectionLatency', answer: ACCEPT },
  // Never a silent document only: the reference target is offered for the unknown stack.
  { id: 'scaffold', answer: ACCEPT },
];

describe('init in an empty directory (partial-context protocol)', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('asks Q1 and Q2 twice at most, then writes a technology-agnostic design with every assumption listed', async () => {
    const cwd = await projectFrom(undefined);
    const run = await runWizard(cwd, UNKNOWN_EVERYTHING);
    expect(run.error).toBeUndefined();
    run.prompter.assertDone();

    // Never the same question more than twice.
    const counts = new Map<string, number>();
    for (const { id } of run.prompter.asked) counts.set(id.replace(/:again$|-again$/, ''), (counts.get(id.replace(/:again$|-again$/, '')) ?? 0) + 1);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    // The second ask carries concrete examples.
    expect(run.prompter.asked.find((q) => q.id === 'actions:describe-again')?.help).toContain('createPayment POST /payments');

    const config = await readConfig(cwd);
    expect(config['format']).toBe('md');
    expect(config['output']).toBe('docs/idempotency-design.md');
    expect(config['actions']).toEqual([expect.objectContaining({ name: 'genericProtectedAction', trigger: 'http' })]);
    expect(config['stack']).toEqual({ language: 'unknown', framework: 'unknown', database: 'unknown', broker: 'none', testFramework: 'unknown' });
    expect(config['scaffold']).toEqual({ dir: 'src/idempotency' });
    const assumptions = config['assumptions'] as string[];
    expect(assumptions.some((a) => a.includes('genericProtectedAction'))).toBe(true);
    expect(assumptions.some((a) => a.includes('language, framework, database could not be determined'))).toBe(true);

    const doc = await readFile(path.join(cwd, 'docs/idempotency-design.md'), 'utf8');
    expect(doc).toContain('genericProtectedAction');
    expect(doc).toContain('PostgreSQL');
    expect(run.stdout).toContain('technology-agnostic (PostgreSQL reference)');
    // The reference target was generated, and both the terminal and the document say so.
    await readFile(path.join(cwd, 'src/idempotency/pgStore.ts'), 'utf8');
    expect(doc).toContain('holds the reference target instead');
    expect(run.stdout + run.stderr).toContain('holds the reference target instead');
  });

  it('uses the actions named on the second try and asks only the missing fingerprint fields', async () => {
    const cwd = await projectFrom(undefined);
    const run = await runWizard(cwd, [
      { id: 'format', answer: ACCEPT },
      { id: 'output', answer: ACCEPT },
      { id: 'actions:describe', answer: '' },
      { id: 'actions:describe-again', answer: 'submit order POST /orders, nightly invoice job' },
      { id: 'fields:submitOrder', answer: 'customerId, items[].sku, items[].quantity' },
      { id: 'fields:nightlyInvoiceJob', answer: ACCEPT },
      { id: 'stack:language', answer: 'typescript' },
      { id: 'stack:framework', answer: 'fastify' },
      { id: 'stack:database', answer: 'mysql' },
      { id: 'retrySources', answer: ACCEPT },
      { id: 'payments', answer: ACCEPT },
      { id: 'concurrency', answer: ACCEPT },
      { id: 'retention', answer: ACCEPT },
      { id: 'detectionLatency', answer: ACCEPT },
      { id: 'scaffold', answer: ACCEPT },
    ]);
    expect(run.error).toBeUndefined();
    run.prompter.assertDone();
    const config = await readConfig(cwd);
    expect(config['actions']).toEqual([
      { name: 'submitOrder', trigger: 'http', route: 'POST /orders', significantFields: ['customerId', 'items[].sku', 'items[].quantity'] },
      { name: 'nightlyInvoiceJob', trigger: 'cron', significantFields: ['scheduledFor'] },
    ]);
    expect(config['retrySources']).toEqual(['client-retry', 'double-click', 'load-balancer-replay', 'cron-overlap']);
    expect(config['stack']).toMatchObject({ language: 'typescript', framework: 'fastify', database: 'mysql' });
    expect(config['retention']).toBe('24h');
    // Fastify on MySQL has its own target: the mysql2 store is generated, no reference stand-in.
    expect(config['scaffold']).toEqual({ dir: 'src/idempotency' });
    expect(run.stdout).toContain('src/idempotency/mysqlStore.ts');
    expect(run.stdout + run.stderr).not.toContain('No scaffolding target');
  });
});
