import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { DesignModel } from '../../../src/model/types.js';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { ROOT, modelFor } from '../generateInto.js';
import { DATABASE_URL, postgresSkipReason } from '../harness.js';
import { generateTriggersAndCompile } from './generateTriggers.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`webhook-only suites skipped: ${skip}`);

/** The checkout design with only its Stripe webhook: no action a client sends an Idempotency-Key to. */
const webhookOnly = (framework = 'express'): Promise<DesignModel> =>
  modelFor('express-stripe-payments', (raw) => {
    raw.actions = (raw.actions as Array<{ trigger: string }>).filter((action) => action.trigger === 'webhook');
    (raw.stack as Record<string, unknown>).framework = framework;
  });

const fileOf = (files: ReturnType<typeof generateScaffold>, name: string) => files.find((file) => file.path === `src/idempotency/${name}`)?.contents ?? '';

describe('a design whose only action is a webhook', () => {
  it('gets no HTTP middleware keyed by the Idempotency-Key header: index.ts, the suite and TRIGGERS.md point at the processor', async () => {
    const files = generateScaffold(await webhookOnly(), { dir: 'src/idempotency' });
    const index = fileOf(files, 'index.ts');
    expect(index).not.toMatch(/handleStripeWebhook: idempotent\(/);
    expect(index).not.toMatch(/import \{ idempotent,/);
    expect(index).toContain('handleStripeWebhook (webhook) goes through createWebhookProcessor() in webhooks/');
    const suite = fileOf(files, 'idempotency.test.ts');
    expect(suite).not.toContain('KEY_HEADER');
    expect(suite).not.toContain('express');
    expect(suite).toContain("its entry point is createWebhookProcessor() in webhooks/");
    const triggers = fileOf(files, 'TRIGGERS.md');
    expect(triggers).toContain('createWebhookProcessor');
    expect(triggers).not.toContain('idempotency.handleStripeWebhook');
    // A route that verifies the signature itself is pointed at the identity helpers verify.ts really exports.
    const verify = fileOf(files, 'webhooks/verify.ts');
    for (const helper of ['stripeEventOf', 'adyenEventOf', 'paypalEventOf']) {
      expect(triggers).toContain(`\`${helper}(`);
      expect(verify).toContain(`export function ${helper}(`);
    }
    expect(files.map((file) => file.path)).toContain('src/idempotency/webhooks/webhooks.ts');
  });

  it('a mixed Next.js design: the wrappers by name take only the HTTP actions', async () => {
    const model = await modelFor('express-stripe-payments', (raw) => {
      (raw.stack as Record<string, unknown>).framework = 'nextjs';
    });
    const index = fileOf(generateScaffold(model, { dir: 'src/idempotency' }), 'index.ts');
    expect(index).toContain('const HTTP_ACTIONS = { createPayment: ACTIONS.createPayment, refundPayment: ACTIONS.refundPayment };');
    expect(index).toContain('...nextWrappers(options, HTTP_ACTIONS),');
  });

  it.skipIf(skip !== undefined)('compiles with tsc --strict, and its suites (core scenarios, webhooks) pass against the real PostgreSQL', async () => {
    const generated = await generateTriggersAndCompile(await webhookOnly(), []);
    expect(generated.tscOutput).toBe('');
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const suites = ['idempotency.test.ts', 'webhooks/webhooks.test.ts'].map((file) => `src/idempotency/${file}`);
    const { stdout } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose', ...suites], {
      cwd: generated.dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1' },
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toMatch(/concurrent duplicate deliveries: the effect runs exactly once/);
    expect(stdout).toMatch(/Tests\s+\d+ passed/);
    expect(stdout).not.toMatch(/\d+ failed/);
    expect(stdout).not.toMatch(/skipped/);
    // tsc and a vitest child over the whole scaffold: minutes on a saturated machine.
  }, 300_000);
});
