import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { auditProject } from '../../src/findings/auditProject.js';

const ROUTE = `import { Router } from 'express';
import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export const refunds = Router();
refunds.post('/refunds', async (req, res) => {
  // idempotency-builder-ignore client-controlled-amount: support staff enter partial refunds by hand
  const refund = await stripe.refunds.create({ payment_intent: req.body.paymentIntent, amount: req.body.amount });
  res.json(refund);
});
`;
const CONFIG = {
  actions: [{ name: 'refundCharge', trigger: 'http', route: 'POST /refunds', significantFields: ['paymentIntent', 'amount'], provider: 'stripe', source: 'src/refunds.ts:5' }],
  stack: { language: 'typescript', framework: 'express', database: 'postgres' },
  payments: ['stripe'],
  concurrency: 'multi-instance',
  retention: '72h',
  detectionLatency: '50ms',
  format: 'md',
};

async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ib-findings-doc-'));
  await mkdir(path.join(dir, 'src'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'refunds', dependencies: { express: '5.0.0', stripe: '17.0.0' } }));
  await writeFile(path.join(dir, 'src/refunds.ts'), ROUTE);
  await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(CONFIG));
  return dir;
}

describe('the document written from the code', () => {
  it('lists every finding with location, fix and status, and each action shows the findings in its handler', async () => {
    const dir = await project();
    const { findings } = await auditProject(dir);
    const result = await generate({ cwd: dir, dryRun: true, split: 'never', date: '2026-12-02', findings });
    const text = result.plan.find((p) => p.path === result.document)?.contents.replace(/\\([^\s])/g, '$1') ?? '';
    expect(result.model.codeAudited).toBe(true);
    expect(result.model.findings.map((f) => [f.ruleId, f.location, f.status])).toEqual([
      ['client-controlled-amount', 'src/refunds.ts:7', 'accepted: support staff enter partial refunds by hand'],
      ['provider-call-without-key', 'src/refunds.ts:7', 'open'],
      ['lease-shorter-than-worst-case', 'src/refunds.ts:5', 'open'],
    ]);
    expect(text).toContain('### Findings in the code');
    expect(text).toContain('`src/refunds.ts:7`');
    expect(text).toContain('stripe refunds.create is called without an idempotencyKey');
    expect(text).toContain('accepted: support staff enter partial refunds by hand');
    expect(result.model.actions[0]?.findings.length).toBe(3);
    expect(text).toContain('Error at `src/refunds.ts:7`: stripe refunds.create is called without an idempotencyKey');
  });

  it('a design from the config alone says the code was not checked instead of claiming it is clean', async () => {
    const dir = await project();
    const result = await generate({ cwd: dir, dryRun: true, split: 'never', date: '2026-12-02' });
    const text = result.plan.find((p) => p.path === result.document)?.contents ?? '';
    expect(result.model.codeAudited).toBe(false);
    expect(text).toContain('made from the configuration alone, so the code was not checked');
  });
});
