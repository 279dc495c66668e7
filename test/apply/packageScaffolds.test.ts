import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyScaffoldPlan, mergeScaffoldPlans } from '../../src/apply/mergeScaffoldPlans.js';
import { runApply } from '../../src/cli/apply.js';
import { generate } from '../../src/generate.js';
import { ROOT } from './fixtureApp.js';

describe('apply in a repository whose actions live in several packages', { timeout: 300_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-packages-'));
    await cp(path.join(ROOT, 'fixtures/apply/monorepo'), dir, { recursive: true });
    await generate({ cwd: dir, format: 'md', date: '2026-01-15', diagrams: 'beautiful-mermaid' });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("wires the packages whose scaffold is there, and says to run generate for a package whose scaffold is missing", async () => {
    await rm(path.join(dir, 'packages/worker/src/idempotency'), { recursive: true });
    const plan = await runApply({ cwd: dir, dryRun: true, quiet: true }, { interactive: false });
    expect(plan.stale).toEqual([]);
    expect(plan.changes.map((c) => c.path).every((file) => file.startsWith('packages/api/'))).toBe(true);
    expect(plan.changes.some((c) => c.path === 'packages/api/src/routes/orders.ts')).toBe(true);
    expect(plan.manual.filter((step) => step.action === 'sendReceipt')).toEqual([
      {
        action: 'sendReceipt',
        file: 'packages/worker/src/worker.ts',
        line: 12,
        reason: 'its package (packages/worker) has no scaffold in packages/worker/src/idempotency yet: run `idempotency-builder generate` (it writes one scaffold per package), then apply again',
      },
    ]);
  });

  it('refuses with the command to run when no package has its scaffold', async () => {
    await rm(path.join(dir, 'packages/api/src/idempotency'), { recursive: true });
    await expect(runApply({ cwd: dir, dryRun: true, quiet: true }, { interactive: false })).rejects.toMatchObject({
      message: 'The scaffolding is not in packages/api/src/idempotency, packages/worker/src/idempotency yet.',
      fix: 'Run `idempotency-builder generate` first (it writes one scaffold per package), then apply.',
    });
  });
});

describe('merging the scaffolds\' plans', () => {
  it('keeps each package\'s changes, and fails loudly if two scaffolds would change one file differently', () => {
    const api = { ...emptyScaffoldPlan('packages/api/src/idempotency'), changes: [{ path: 'packages/api/src/routes/orders.ts', before: 'a', after: 'b' }] };
    const worker = { ...emptyScaffoldPlan('packages/worker/src/idempotency'), changes: [{ path: 'packages/worker/src/worker.ts', before: 'c', after: 'd' }] };
    expect(mergeScaffoldPlans([api, worker]).changes.map((c) => c.path)).toEqual(['packages/api/src/routes/orders.ts', 'packages/worker/src/worker.ts']);
    const shared = { ...emptyScaffoldPlan('packages/worker/src/idempotency'), changes: [{ path: 'packages/api/src/routes/orders.ts', before: 'a', after: 'e' }] };
    expect(() => mergeScaffoldPlans([api, shared])).toThrow('two scaffolds would both change packages/api/src/routes/orders.ts (packages/api/src/idempotency and packages/worker/src/idempotency)');
  });
});
