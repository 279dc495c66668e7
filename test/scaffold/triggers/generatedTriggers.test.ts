import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { planTriggers, triggerFiles } from '../../../src/scaffold/triggers/index.js';
import { ROOT, modelFor } from '../generateInto.js';
import { DATABASE_URL, postgresSkipReason } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`generated trigger suites skipped: ${skip}`);

describe('trigger scaffolding', () => {
  it('generates only what the design has: the broker adapter, the provider lookups, nothing for HTTP-only designs', async () => {
    const paths = (await triggersModel('nats').then((model) => triggerFiles(model))).map((file) => file.path);
    expect(paths).toContain('consumers/nats.ts');
    expect(paths).not.toContain('consumers/amqplib.ts');
    expect(paths).toEqual(expect.arrayContaining(['webhooks/verify.ts', 'webhooks/express.ts', 'cron/guard.ts', 'reconcile/stripe.ts', 'reconcile/job.ts', 'TRIGGERS.md']));
    expect(paths).not.toContain('reconcile/adyen.ts');
    // Reconciliation covers the actions that create something at Stripe, not the webhook that receives its events.
    expect(planTriggers(await triggersModel()).reconciled.map((action) => action.codeName)).toEqual(['createPayment', 'refundPayment']);
    const httpOnly = await modelFor('express-stripe-payments', (raw) => {
      raw.actions = (raw.actions as Array<{ trigger: string }>).filter((action) => action.trigger === 'http');
    });
    expect(triggerFiles(httpOnly).map((file) => file.path)).toEqual(['reconcile/reconcile.ts', 'reconcile/metrics.ts', 'reconcile/stripe.ts', 'reconcile/job.ts', 'reconcile/reconcile.test.ts', 'TRIGGERS.md']);
    expect(planTriggers(httpOnly).webhooks).toHaveLength(0);
  });

  it('a legacy Bull design gets the Bull adapter (its own types), not the BullMQ one', async () => {
    const model = await triggersModel('bull');
    const paths = triggerFiles(model).map((file) => file.path);
    expect(paths).toContain('consumers/bull.ts');
    expect(paths).not.toContain('consumers/bullmq.ts');
    const readme = triggerFiles(model).find((file) => file.path === 'TRIGGERS.md')!.contents;
    expect(readme).toContain("queue.process('fulfilOrder', bullProcessor({");
    expect(readme).not.toContain('new Worker(');
  });

  it('compiles with tsc --strict, with every consumer adapter against the real client libraries\' types', async () => {
    const generated = await generateTriggersAndCompile(await triggersModel());
    expect(generated.tscOutput).toBe('');
  });

  it.skipIf(skip !== undefined)('the generated trigger suites pass against the real PostgreSQL', async () => {
    const generated = await generateTriggersAndCompile(await triggersModel());
    expect(generated.tscOutput).toBe('');
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const suites = ['webhooks/webhooks.test.ts', 'consumers/consumers.test.ts', 'cron/cron.test.ts', 'reconcile/reconcile.test.ts'].map((file) => `src/idempotency/${file}`);
    const { stdout } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose', ...suites], {
      cwd: generated.dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1' },
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/\d+ failed/);
    expect(stdout).not.toMatch(/skipped/);
  });
});
