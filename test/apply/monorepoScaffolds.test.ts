import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { generate } from '../../src/generate.js';
import { compile, ROOT, snapshotTree } from './fixtureApp.js';

const API = 'packages/api';
const WORKER = 'packages/worker';

/**
 * Issue 19: an npm workspaces repository whose protected actions live in two packages (an Express API with one POST
 * route that inserts, a BullMQ worker). generate gives each package its own scaffold; apply wires each action with
 * the scaffold of its own package, imported by a path inside that package.
 */
describe('apply in a monorepo with one scaffold per package', { timeout: 300_000 }, () => {
  let dir: string;

  beforeAll(async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-monorepo-'));
    await cp(path.join(ROOT, 'fixtures/apply/monorepo'), dir, { recursive: true });
    await generate({ cwd: dir, format: 'md', date: '2026-01-15', diagrams: 'beautiful-mermaid' });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('wires the route and the consumer each with its package\'s scaffold, type-checks, and a second apply changes nothing', async () => {
    const read = (file: string) => readFile(path.join(dir, file), 'utf8');
    // generate placed the configured folder in the API and a default one in the worker.
    expect(await read(`${API}/src/idempotency/index.ts`)).toBeTruthy();
    expect(await read(`${WORKER}/src/idempotency/index.ts`)).toBeTruthy();

    const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    expect(first.manual.filter((step) => step.reason.includes('own scaffold') || step.reason.includes('has no scaffold'))).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual([`${API}/src/idempotency/claimTransaction.ts`, `${API}/src/idempotency/instance.ts`, `${API}/src/routes/orders.ts`, `${WORKER}/src/idempotency/instance.ts`, `${WORKER}/src/worker.ts`]);

    const routes = await read(`${API}/src/routes/orders.ts`);
    expect(routes).toContain("ordersRouter.post('/orders', idempotency.createOrder, async (req, res, next) => {");
    // The insert moved onto the claim's transaction, through the API's own claimTransaction module.
    expect(routes).toContain('const claimDb = transactionOf(idempotencyOf(req)) ?? db;');
    const worker = await read(`${WORKER}/src/worker.ts`);
    expect(worker).toContain('core: idempotency.core,\n      action: ACTIONS.sendReceipt,');
    // Every import of a scaffold is relative and stays inside the file's own package, onto that package's scaffold.
    for (const [file, text] of [[`${API}/src/routes/orders.ts`, routes], [`${WORKER}/src/worker.ts`, worker]] as const) {
      const own = file.startsWith(API) ? API : WORKER;
      const specifiers = [...text.matchAll(/from '([^']*idempotency[^']*)'/g)].map((m) => m[1]!);
      expect(specifiers.length, file).toBeGreaterThan(0);
      for (const specifier of specifiers) {
        expect(specifier.startsWith('.'), specifier).toBe(true);
        expect(path.posix.join(path.posix.dirname(file), specifier).startsWith(`${own}/src/idempotency/`), `${file} imports ${specifier}`).toBe(true);
      }
    }

    // The record names each action's own scaffold: its instance is among what was applied for it.
    const record = JSON.parse(await read('.idempotency-builder/apply.json')) as { actions: Array<{ action: string; applied: Array<{ file: string }> }> };
    const applied = (action: string) => record.actions.find((a) => a.action === action)?.applied.map((a) => a.file);
    const files = (action: string) => [...new Set(applied(action))].sort();
    expect(files('createOrder')).toEqual([`${API}/src/idempotency/claimTransaction.ts`, `${API}/src/idempotency/instance.ts`, `${API}/src/routes/orders.ts`]);
    expect(files('sendReceipt')).toEqual([`${WORKER}/src/idempotency/instance.ts`, `${WORKER}/src/worker.ts`]);

    expect(await compile(path.join(dir, API))).toBe('');
    expect(await compile(path.join(dir, WORKER))).toBe('');

    const before = await snapshotTree(dir);
    const again = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it('the document lists each package\'s wiring under its own action', async () => {
    const result = await generate({ cwd: dir, format: 'md', date: '2026-01-15', diagrams: 'beautiful-mermaid' });
    const doc = await readFile(path.join(dir, result.document), 'utf8');
    const section = doc.slice(doc.indexOf('Wiring in your code'));
    const row = (action: string) => section.split('\n').find((line) => line.startsWith(`| ${action} |`)) ?? '';
    expect(row('createOrder')).toContain(`${API}/src/idempotency/instance.ts`);
    expect(row('createOrder')).not.toContain(WORKER);
    expect(row('sendReceipt')).toContain(`${WORKER}/src/idempotency/instance.ts`);
    expect(row('sendReceipt')).not.toContain(API);
    expect(section).not.toContain('scaffold.dir) only');
  });
});
