import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Inspection } from '../../src/inspect/types.js';
import { resolveAnswers } from '../../src/questions/resolveAnswers.js';
import { scaffoldProject } from '../../src/scaffold/index.js';
import { planScaffolds } from '../../src/scaffold/placement/planScaffolds.js';
import { findServerPackage } from '../../src/scaffold/placement/serverPackage.js';
import { modelFor } from './generateInto.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-wt-placement-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

const manifest = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ name, ...extra });

/** The layout of Yuefii/starter-monorepo@18bec202: a pnpm workspace, an Express API and a Next.js front end, no mutating route yet. */
const STARTER = {
  'package.json': manifest('starter-monorepo', { devDependencies: { typescript: '^5' } }),
  'pnpm-workspace.yaml': "packages:\n  - 'apps/*'\n",
  'apps/api/package.json': manifest('server', { dependencies: { express: '^4.18.2', '@prisma/client': '5.7.1' } }),
  'apps/api/src/index.ts': '',
  'apps/web/package.json': manifest('web', { dependencies: { next: '14.0.4', react: '^18' } }),
  'apps/web/app/page.tsx': '',
};

describe('findServerPackage', () => {
  const read = (files: Record<string, string>) => (file: string) => files[file.split(path.sep).join('/').replace(/^\/r\//, '')];

  it('the package that depends on a server framework; an API framework before Next.js, whatever the order', () => {
    expect(findServerPackage('/r', ['apps/web', 'apps/api'], read(STARTER))).toBe('apps/api');
    expect(findServerPackage('/r', ['apps/web'], read(STARTER))).toBe('apps/web');
  });

  it('none when no package serves HTTP: a devDependency (a library testing against Express) does not count', () => {
    const files = { 'packages/ui/package.json': manifest('ui', { dependencies: { react: '18.3.1' } }), 'packages/client/package.json': manifest('client', { devDependencies: { express: '4.19.2' } }) };
    expect(findServerPackage('/r', ['packages/ui', 'packages/client', 'packages/missing'], read(files))).toBeUndefined();
  });
});

describe('init in a workspace where no handler names a package', () => {
  it('puts the scaffold in the server package under its src/, never the repository root', async () => {
    const root = await repo(STARTER);
    const stack = { language: 'typescript', frameworks: ['express', 'nextjs'], databases: ['postgres'], orms: ['prisma'], brokers: [], testFramework: 'unknown', packageManager: 'pnpm', payments: [] } satisfies Omit<Inspection['stack'], 'packages'>;
    const inspection: Inspection = {
      root,
      stack: { ...stack, packages: [{ dir: 'apps/api', name: 'server', stack: { ...stack, frameworks: ['express'] } }, { dir: 'apps/web', name: 'web', stack: { ...stack, frameworks: ['nextjs'] } }] },
      findings: [],
      warnings: [],
    };
    const { answers } = await resolveAnswers({ flags: { concurrency: 'single-server', retention: '24h', detectionLatency: '50ms' }, config: {}, inspection, cwd: root, interactive: false, yes: true });
    expect(answers.actions.map((action) => action.name)).toEqual(['genericProtectedAction']);
    expect(answers.scaffold).toEqual({ dir: 'apps/api/src/idempotency' });
    // The stack follows the same package: Express, not "unknown" from the Express + Next.js union.
    expect(answers.stack).toMatchObject({ language: 'typescript', framework: 'express', database: 'postgres' });
  });
});

describe('planScaffolds with actions in several packages', () => {
  it('a configured folder in none of them is not given to the first: each package keeps its own, and the user is told', async () => {
    const root = await repo({
      'package.json': manifest('root', { workspaces: ['apps/*', 'packages/*'] }),
      'apps/api/package.json': manifest('api', { dependencies: { express: '5.0.0' } }),
      'apps/api/src/payments.ts': '',
      'apps/admin/package.json': manifest('admin'),
      'apps/admin/src/refunds.ts': '',
      'packages/shared/package.json': manifest('shared'),
      'packages/shared/src/index.ts': '',
    });
    const model = await modelFor('express-stripe-payments');
    model.actions = model.actions.map((action, index) => ({ ...action, source: index === 0 ? 'apps/api/src/payments.ts:3' : 'apps/admin/src/refunds.ts:9' }));
    const configured = 'packages/shared/src/idempotency';
    expect(planScaffolds(root, model, configured).map((plan) => [plan.packageDir, plan.dir])).toEqual([
      ['apps/api', 'apps/api/src/idempotency'],
      ['apps/admin', 'apps/admin/src/idempotency'],
    ]);
    const project = await scaffoldProject({ root, model, dir: configured, packageManager: 'npm' });
    expect(project.files.some((file) => file.path.startsWith('packages/shared/'))).toBe(false);
    expect(project.notes[0]).toContain(`${configured} is in none of the packages`);
  }, 120_000);
});
