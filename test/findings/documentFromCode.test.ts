import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema, type Config } from '../../src/config/schema.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { generate } from '../../src/generate.js';
import { buildDesign } from '../../src/model/index.js';
import type { ActionCodeFacts } from '../../src/model/codeFacts.js';
import { worstCaseOf } from '../../src/model/timing.js';
import { CLI_TEST_TIMEOUT, ROOT, runCli } from '../e2e/cli.js';

/** Every document file init wrote (a single file or a split folder), Markdown escapes removed. */
async function documentText(dir: string): Promise<string> {
  const docs = path.join(dir, 'docs');
  const files = (await readdir(docs, { recursive: true })).filter((f) => f.endsWith('.md')).sort();
  const texts = await Promise.all(files.map((f) => readFile(path.join(docs, f), 'utf8')));
  return texts.join('\n').replace(/\\([^\s\w])/g, '$1');
}

/** Prose only: what a reader reads outside tables. */
const prose = (text: string) => text.split('\n').filter((line) => !line.startsWith('|')).join('\n');

describe('the document for the Next.js + Stripe fixture is written from its code', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('names handlers, files and calls in the per-action text and says nothing the code contradicts', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'ib-from-code-'));
    await cp(path.join(ROOT, 'fixtures/projects/next-app'), dir, { recursive: true });
    const init = await runCli(['init', '--cwd', dir, '--yes', '--format', 'md']);
    expect(init.code, init.stderr).toBe(0);
    const text = await documentText(dir);
    const story = prose(text);

    // Handlers, files and provider calls in the prose, not only in a table.
    expect(story).toContain('The handler `placeOrder` at `src/app/(shop)/cart/actions.ts:7` calls `stripe.checkout.sessions.create` (`src/app/(shop)/cart/actions.ts:11`, no idempotency key)');
    expect(story).toContain('inserts into `order` (`src/app/(shop)/cart/actions.ts:10`)');
    expect(story).toContain('updates `order` (`src/app/(shop)/cart/actions.ts:12`)');
    expect(story).toContain('The handler `handler` at `src/pages/api/legacy/refund.ts:4` calls `stripe.refunds.create` (`src/pages/api/legacy/refund.ts:6`, no idempotency key)');
    expect(story).toMatch(/refunds a second time through Stripe \(`stripe\.refunds\.create`\)/);
    expect(story).toContain('The handler `POST` at `src/app/api/webhooks/stripe/route.ts:5`');
    // Findings reach the action's own text, with the fix beside them.
    expect(story).toMatch(/provider call without an idempotency key at `src\/pages\/api\/legacy\/refund\.ts:6`/);

    // A checkout session is a harmless duplicate: nothing is "charged twice" anywhere.
    expect(text).not.toMatch(/charged twice/i);
    expect(story).toContain('creates another checkout session at Stripe, which is harmless');

    // The webhook is keyed by the Stripe event id, never by a header Stripe does not send.
    const webhookRow = text.split('\n').find((line) => line.startsWith('| handleStripeWebhook') && line.includes('Provider event id'));
    expect(webhookRow).toContain('`event.id`');
    expect(webhookRow).not.toContain('Idempotency-Key request header');
    expect(text).not.toMatch(/handleStripeWebhook[^\n]*Client-generated/);

    // No promise of a job nothing generates.
    expect(text).not.toMatch(/reconciliation job runs/i);

    // Every action that calls Stripe holds its key at least as long as the client may wait (or renews the lease).
    const result = await generate({ cwd: dir, check: true });
    expect(result.plan.filter((p) => p.action !== 'unchanged').map((p) => p.path)).toEqual([]);
    const snapshot = JSON.parse(await readFile(path.join(dir, '.idempotency-builder/existing-protection.json'), 'utf8')) as { actionFacts: ActionCodeFacts[] };
    const calling = snapshot.actionFacts.filter((f) => f.calls.length > 0);
    expect(calling.map((f) => f.action).sort()).toEqual(['createCheckoutSession', 'createRefund', 'placeOrder']);
    for (const facts of calling) {
      const action = result.model.actions.find((a) => a.name === facts.action)!;
      const worst = worstCaseOf(facts.budgets, facts.platformCap)!;
      expect(worst.ms).toBe(160_000);
      expect(action.heartbeatMs !== undefined || action.lockTimeoutMs >= worst.ms!, `${action.name}: lease ${action.lockTimeoutMs} ms`).toBe(true);
      expect(action.lockJustification).toContain('80 seconds time-out × 2 attempts');
    }
    // The grammar nit: never "a 18 seconds lease".
    expect(text).not.toMatch(/\ba \d+ seconds lease\b/);
  });
});

const SIGNUP = (second: string) => `import express from 'express';
import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_KEY!, { timeout: 5_000, maxNetworkRetries: 1 });
export const router = express.Router();
router.post('/signup', async (req, res) => {
  const customer = await stripe.customers.create({ email: req.body.email }, { idempotencyKey: \`customer:\${req.body.userId}\` });
${second}
  res.json({ customer: customer.id });
});
`;

async function projectWith(route: string): Promise<{ dir: string; config: Config }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-saga-'));
  await mkdir(path.join(dir, 'src'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'signup', dependencies: { express: '5.0.0', stripe: '^23.1.0' } }));
  await writeFile(path.join(dir, 'src/signup.ts'), route);
  const config = configSchema.parse({
    format: 'md', output: 'docs/idempotency-design.md', split: 'never',
    actions: [{ name: 'signUp', trigger: 'http', route: 'POST /signup', significantFields: ['email', 'userId'], source: 'src/signup.ts:5' }],
    stack: { language: 'typescript', framework: 'express', database: 'postgres', broker: 'none', testFramework: 'vitest' },
    retrySources: ['client-retry'], payments: ['stripe'], concurrency: 'multi-instance', retention: '24h', detectionLatency: '50ms', scaffold: false,
  }) as Config;
  await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config));
  return { dir, config };
}

describe('sagas proposed from the code', () => {
  it('two external effects in sequence become steps named after the calls, with the provider\'s own compensations', async () => {
    const { dir, config } = await projectWith(SIGNUP(`  await stripe.subscriptions.create({ customer: customer.id, items: [{ price: 'price_1' }] }, { idempotencyKey: \`sub:\${req.body.userId}\` });`));
    const { actionFacts } = await auditProject(dir);
    const model = buildDesign(config, undefined, { now: new Date('2026-12-03T00:00:00Z'), code: actionFacts });
    expect(model.proposedSagas.map((s) => s.steps.map((step) => [step.name, step.call, step.location, step.compensation, step.compensationCall]))).toEqual([[
      ['createCustomer', 'stripe.customers.create', 'src/signup.ts:6', 'deleteCustomer', 'stripe.customers.del'],
      ['createSubscription', 'stripe.subscriptions.create', 'src/signup.ts:7', 'cancelSubscription', 'stripe.subscriptions.cancel'],
    ]]);
    // The client is bounded (5 s × 2 attempts): a plain lease that covers it, no renewal needed.
    const action = model.actions[0]!;
    expect(action.heartbeatMs).toBeUndefined();
    expect(action.lockTimeoutMs).toBeGreaterThanOrEqual(10_000);
    expect(action.duplicateImpact).toContain('starts a second subscription at Stripe');
  });

  it('a step the provider cannot undo says "none: manual" instead of inventing a compensation', async () => {
    const { dir } = await projectWith(SIGNUP(`  await stripe.creditNotes.create({ invoice: req.body.invoiceId }, { idempotencyKey: \`cn:\${req.body.userId}\` });`));
    const result = await generate({ cwd: dir, inspection: { findings: [] }, dryRun: true, date: '2026-12-03' });
    const steps = result.model.proposedSagas[0]?.steps ?? [];
    expect(steps.map((s) => [s.name, s.compensation ?? 'none'])).toEqual([['createCustomer', 'deleteCustomer'], ['createCreditNote', 'none']]);
    const text = result.plan.find((p) => p.path === result.document)?.contents.replace(/\\([^\s\w])/g, '$1') ?? '';
    expect(text).toContain('signUp: saga proposed from the code');
    expect(text).toMatch(/\| 2 +\| createCreditNote +\| `stripe\.creditNotes\.create` at `src\/signup\.ts:7` +\| none: manual/);
    expect(text).toContain('createCreditNote has no undo in the provider\'s API');
  });

  it('one external effect is not a saga (the fixed twin)', async () => {
    const { dir, config } = await projectWith(SIGNUP(''));
    const { actionFacts } = await auditProject(dir);
    expect(buildDesign(config, undefined, { now: new Date('2026-12-03T00:00:00Z'), code: actionFacts }).proposedSagas).toEqual([]);
  });
});
