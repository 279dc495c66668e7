import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planApply } from '../../src/apply/planApply.js';
import { parseConfig } from '../../src/config/load.js';
import type { CodeFinding } from '../../src/findings/types.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { ROOT } from './fixtureApp.js';

const ROUTES = `import express from 'express';

export const router = express.Router();
const ledger: Array<{ customer: string; amount: number }> = [];

function credit(customer: string, amount: number) {
  ledger.push({ customer, amount });
}

router.post('/subscriptions', async (req, res) => {
  credit(req.body.customer, req.body.amount);
  res.status(201).json({ ok: true });
});

router.post('/topups', async (req, res) => {
  credit(req.body.customer, req.body.amount);
  res.status(201).json({ ok: true });
});
`;

const CONFIG = {
  actions: [
    { name: 'createSubscription', trigger: 'http', route: 'POST /subscriptions', significantFields: ['customer', 'amount'], source: 'src/routes.ts:10' },
    { name: 'createTopup', trigger: 'http', route: 'POST /topups', significantFields: ['customer', 'amount'], source: 'src/routes.ts:15' },
  ],
  stack: { language: 'typescript', framework: 'express', database: 'postgres', testFramework: 'vitest' },
  payments: [],
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
  scaffold: { dir: 'src/idempotency' },
};

/** A finding in the credit() helper both handlers call (lines 6-8), as init records it. */
const SHARED: CodeFinding = {
  ruleId: 'read-then-create',
  title: 'Read then create',
  severity: 'warning',
  file: 'src/routes.ts',
  line: 7,
  column: 3,
  message: 'credit() appends without a uniqueness check',
  evidence: 'ledger.push({ customer, amount });',
  fix: 'Give the ledger a unique key.',
  docsAnchor: 'read-then-create',
  fingerprint: 'read-then-create:credit',
};

describe('apply lists a finding two actions share once, under the action it applies, naming the other', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('all actions: under the first, "also" the second; --action for the second: listed there, not lost', async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-shared-'));
    dirs.push(dir);
    await mkdir(path.join(dir, 'src'), { recursive: true });
    await writeFile(path.join(dir, 'src/routes.ts'), ROUTES);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'shared', type: 'module' }));
    const config = parseConfig(JSON.stringify(CONFIG));
    const code = [
      { action: 'createSubscription', handler: { file: 'src/routes.ts', line: 10 }, calls: [], writes: [], budgets: [], spans: [{ file: 'src/routes.ts', from: 10, to: 13 }, { file: 'src/routes.ts', from: 6, to: 8 }] },
      { action: 'createTopup', handler: { file: 'src/routes.ts', line: 15 }, calls: [], writes: [], budgets: [], spans: [{ file: 'src/routes.ts', from: 15, to: 18 }, { file: 'src/routes.ts', from: 6, to: 8 }] },
    ];
    const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z'), findings: [SHARED], code });
    for (const file of generateScaffold(model, { dir: 'src/idempotency' })) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
    }
    // The design counts it once and shows it in both actions' code.
    expect(model.findings).toHaveLength(1);
    expect(model.actions.map((a) => a.findings.length)).toEqual([1, 1]);

    const listed = (plan: Awaited<ReturnType<typeof planApply>>) => plan.manual.filter((step) => step.reason.startsWith('read-then-create'));
    const all = listed(await planApply(dir, { config, model }));
    expect(all).toEqual([{ action: 'createSubscription', file: 'src/routes.ts', line: 7, reason: 'read-then-create: Give the ledger a unique key. (also in the code of createTopup)' }]);
    const second = listed(await planApply(dir, { config, model, action: 'createTopup' }));
    expect(second).toEqual([{ action: 'createTopup', file: 'src/routes.ts', line: 7, reason: 'read-then-create: Give the ledger a unique key. (also in the code of createSubscription)' }]);
  }, 120_000);
});
