import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { applyAgain, compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const WIRED = 'providers: [...idempotencyProviders(idempotency)]';

// Issue #19: one package booting an order service, a payment service and a notification worker, each its own root.
describe('apply on several Nest applications in one package', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  beforeAll(async () => {
    copy = await copyFixture('nestjs-several-apps');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('wires every root whose application holds a marked handler (a shared module counts for both), leaves the worker, type-checks, and is a no-op the second time', async () => {
    const worker = await read('src/notifications/notifications.module.ts');
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    // OrdersController is the orders root's own; BillingModule's InvoicesController is imported by both roots.
    expect(await read('src/orders/app.module.ts')).toContain(`imports: [OrdersModule, BillingModule],\n  ${WIRED},\n})`);
    expect(await read('src/payments/app.module.ts')).toContain('  providers: [...idempotencyProviders(idempotency)],\n');
    expect(await read('src/notifications/notifications.module.ts')).toBe(worker);
    expect(await read('src/billing/billing.module.ts')).not.toContain('idempotencyProviders');
    const registered = first.edits.filter((e) => e.summary.startsWith('registers the idempotency interceptor'));
    expect(registered.map((e) => [e.file, e.action, e.summary])).toEqual([
      ['src/orders/app.module.ts', 'placeOrder', 'registers the idempotency interceptor in AppModule (providers)'],
      ['src/payments/app.module.ts', 'issueInvoice', 'registers the idempotency interceptor in AppModule (providers)'],
    ]);
    expect(first.manual.filter((m) => m.reason.includes('root module'))).toEqual([]);
    expect(await compile(copy.dir)).toBe('');

    await applyAgain(copy.dir);
  });
});

describe('apply on several Nest applications when a module hides its controllers', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;

  beforeAll(async () => {
    copy = await copyFixture('nestjs-several-apps');
    // A list apply cannot read (computed by a call): which application serves OrdersController is unknown. A plain
    // spread (`...[OrdersController]`, `...authenticated`) it reads.
    const module = path.join(copy.dir, 'src/orders/orders.module.ts');
    const text = await readFile(module, 'utf8');
    await writeFile(module, text.replace('controllers: [OrdersController],', 'controllers: [...[OrdersController].filter(Boolean)],'));
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('still wires the roots it can place and names the candidate root modules for the handler it cannot', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    const registered = first.edits.filter((e) => e.summary.startsWith('registers the idempotency interceptor')).map((e) => e.file);
    expect(registered).toEqual(['src/orders/app.module.ts', 'src/payments/app.module.ts']);
    const unplaced = first.manual.filter((m) => m.reason.includes('root module'));
    expect(unplaced).toEqual([
      {
        action: 'placeOrder',
        file: 'src/orders/orders.controller.ts',
        // The handler's line once apply's import is in (11 as inspected).
        line: 12,
        reason: expect.stringContaining('among NotificationsModule (src/notifications/notifications.module.ts), AppModule (src/orders/app.module.ts), AppModule (src/payments/app.module.ts): add ...idempotencyProviders(idempotency)'),
      },
    ]);
  });
});

describe('apply on several Nest applications when one root imports another', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  beforeAll(async () => {
    copy = await copyFixture('nestjs-several-apps');
    // The payment service now mounts the whole order service (under another local name) instead of billing alone.
    const module = path.join(copy.dir, 'src/payments/app.module.ts');
    const text = await readFile(module, 'utf8');
    await writeFile(module, text.replace("import { BillingModule } from '../billing/index.js';", "import { AppModule as OrderServiceModule } from '../orders/app.module.js';").replace('imports: [BillingModule],', 'imports: [OrderServiceModule],'));
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('registers the interceptor once, in the imported root: a second registration would claim every key twice', async () => {
    const payments = await read('src/payments/app.module.ts');
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    const registered = first.edits.filter((e) => e.summary.startsWith('registers the idempotency interceptor')).map((e) => e.file);
    expect(registered).toEqual(['src/orders/app.module.ts']);
    expect(await read('src/payments/app.module.ts')).toBe(payments);
    expect(first.manual.filter((m) => m.reason.includes('root module'))).toEqual([]);
    expect(await compile(copy.dir)).toBe('');
  });
});
