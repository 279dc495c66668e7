import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { ACCEPT, CANCEL, type ScriptStep } from '../../src/questions/scriptedPrompter.js';
import { listFiles, projectFrom, readConfig, runWizard } from './wizardHarness.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

/** What a user of a fully detected Express + Stripe service sees: confirmations, then only Q5–Q7. */
const SCRIPT: ScriptStep[] = [
  { id: 'format', answer: ACCEPT },
  { id: 'output', answer: ACCEPT },
  { id: 'actions', answer: ACCEPT },
  { id: 'stack:confirm', answer: true },
  { id: 'retrySources', answer: ACCEPT },
  { id: 'payments', answer: ACCEPT },
  { id: 'concurrency', answer: 'multi-instance' },
  { id: 'retention', answer: '72h' },
  { id: 'detectionLatency', answer: '50ms' },
  { id: 'scaffold', answer: ACCEPT },
];

describe('init on a fully detected Express + Stripe project', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('asks only Q5–Q7 beyond confirmations and writes a config the code could not have guessed wrong', async () => {
    const cwd = await projectFrom('express-stripe');
    const run = await runWizard(cwd, SCRIPT);
    expect(run.error).toBeUndefined();
    run.prompter.assertDone();

    // The checklist is prefilled from the code, payment-touching actions first, all pre-checked.
    const config = await readConfig(cwd);
    expect(config['$schema']).toBe('./node_modules/idempotency-builder/schema/idempotency.config.schema.json');
    expect(config['actions']).toEqual([
      { name: 'createPayment', trigger: 'http', route: 'POST /payments', significantFields: ['amount', 'currency', 'customerId'], provider: 'stripe', source: 'src/routes/payments.ts:7', scope: 'global' },
      { name: 'createRefund', trigger: 'http', route: 'POST /payments/:paymentId/refunds', significantFields: ['paymentId', 'amount', 'reason'], provider: 'stripe', source: 'src/routes/payments.ts:14', scope: 'global' },
      { name: 'handleStripeWebhook', trigger: 'webhook', route: 'POST /webhooks/stripe', significantFields: ['id', 'type'], provider: 'stripe', source: 'src/routes/webhooks.ts:7', key: { source: 'derived', from: ['id'] } },
    ]);
    expect(config['stack']).toEqual({ language: 'typescript', framework: 'express', database: 'postgres', broker: 'none', testFramework: 'vitest' });
    expect(config['retrySources']).toEqual(['client-retry', 'double-click', 'load-balancer-replay', 'webhook-resend']);
    expect(config['payments']).toEqual(['stripe']);
    expect(config['scaffold']).toEqual({ dir: 'src/idempotency' });
    // Nothing in the fixture authenticates callers: its HTTP actions have no principal to scope keys to.
    expect(config['assumptions']).toEqual([expect.stringContaining('Nothing in the code authenticates callers')]);

    // The stack confirmation shows what was read, and the retention prompt explains the Stripe window.
    expect(run.prompter.asked.find((q) => q.id === 'stack:confirm')?.message).toContain('framework Express · database PostgreSQL');
    expect(run.prompter.notes.join('\n')).toContain('no provider idempotency key: src/routes/payments.ts:9 stripe paymentIntents.create');

    // Then generate ran: the document and the scaffolding exist, and the summary names the decisions and paths.
    // With its findings and both runtime modes the design is past the spec's split threshold: a linked folder.
    const html = await readFile(path.join(cwd, 'docs/idempotency-design/index.html'), 'utf8');
    expect(html).toContain('createRefund');
    expect((await listFiles(cwd)).filter((file) => file.startsWith('src/idempotency/')).length).toBeGreaterThan(3);
    expect(run.stdout).toMatch(/Leases \(lock timeouts\): createPayment \d/);
    expect(run.stdout).toContain('Key retention:');
    expect(run.stdout).toContain('Same key, different request: 422');
    expect(run.stdout).toContain('Providers: Stripe');
    expect(run.stdout).toContain('created docs/idempotency-design/index.html');
  });

  it('starts a re-run from the written config: its answers are the defaults', async () => {
    const cwd = await projectFrom('express-stripe');
    await runWizard(cwd, SCRIPT.map((step): ScriptStep => (step.id === 'concurrency' ? { ...step, answer: 'global' } : step.id === 'retention' ? { ...step, answer: '7d' } : step)));
    const again = await runWizard(cwd, SCRIPT.map((step): ScriptStep => ({ ...step, answer: step.id === 'stack:confirm' ? true : ACCEPT })));
    expect(again.error).toBeUndefined();
    const config = await readConfig(cwd);
    expect(config['concurrency']).toBe('global');
    expect(config['retention']).toBe('7d');
    expect(again.prompter.notes[0]).toContain('Starting from idempotency.config.json');
  });

  // Ctrl-C at any prompt: CancelledError (exit 130) and the project is byte-for-byte what it was.
  for (const [index, step] of SCRIPT.entries()) {
    it(`cancelling at "${step.id}" writes nothing`, async () => {
      const cwd = await projectFrom('express-stripe');
      const before = await listFiles(cwd);
      const script: ScriptStep[] = [...SCRIPT.slice(0, index), { id: step.id, answer: CANCEL }];
      const run = await runWizard(cwd, script);
      expect(run.error).toBeInstanceOf(CancelledError);
      expect((run.error as CancelledError).exitCode).toBe(130);
      expect(await listFiles(cwd)).toEqual(before);
    });
  }
});
