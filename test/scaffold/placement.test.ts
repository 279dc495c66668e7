import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldProject } from '../../src/scaffold/index.js';
import { detectPackageManager, installCommands, missingDependencies } from '../../src/scaffold/placement/installCommands.js';
import { planPlacement } from '../../src/scaffold/placement/planPlacement.js';
import { modelFor } from './generateInto.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A small repository on disk: path → contents ('' for a marker file). */
async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-placement-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

const pkg = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ name, ...extra });

describe('placement in monorepos', () => {
  it('npm/yarn workspaces and Turborepo: into the package that holds the handlers, under its src/', async () => {
    const root = await repo({
      'package.json': pkg('shop', { workspaces: ['apps/*', 'packages/*'] }),
      'turbo.json': '{}',
      'apps/api/package.json': pkg('@shop/api'),
      'apps/api/src/routes/payments.ts': '',
      'apps/web/package.json': pkg('@shop/web'),
      'packages/ui/package.json': pkg('@shop/ui'),
    });
    expect(planPlacement({ root, sources: ['apps/api/src/routes/payments.ts:12'] })).toEqual([{ packageDir: 'apps/api', dir: 'apps/api/src/idempotency', actions: [0] }]);
  });

  it('pnpm workspace with a Next.js app without src/: lib/idempotency, never inside app/', async () => {
    const root = await repo({
      'package.json': pkg('root'),
      'pnpm-workspace.yaml': 'packages:\n  - apps/*\n',
      'apps/web/package.json': pkg('web', { dependencies: { next: '15.1.0' } }),
      'apps/web/app/api/checkout/route.ts': '',
    });
    expect(planPlacement({ root, sources: ['apps/web/app/api/checkout/route.ts:3'] })[0]).toMatchObject({ packageDir: 'apps/web', dir: 'apps/web/lib/idempotency' });
  });

  it('a Next.js app known only by next-env.d.ts (next hoisted elsewhere) still gets lib/idempotency', async () => {
    const root = await repo({ 'package.json': pkg('web'), 'next-env.d.ts': '', 'app/api/checkout/route.ts': '' });
    expect(planPlacement({ root, sources: ['app/api/checkout/route.ts:3'] })[0]!.dir).toBe('lib/idempotency');
  });

  it('an Express app whose code lives in app/ (no Next.js): beside its code in app/idempotency, not a new lib/', async () => {
    const root = await repo({
      'package.json': pkg('tutorials-api', { dependencies: { express: '4.18.2', mysql2: '2.3.3' } }),
      'server.js': '',
      'app/routes/tutorial.routes.js': '',
    });
    expect(planPlacement({ root, sources: ['app/routes/tutorial.routes.js:7'] })[0]!.dir).toBe('app/idempotency');
    // Placeholder designs (no handler found) follow the same layout.
    expect(planPlacement({ root, sources: [undefined] })[0]!.dir).toBe('app/idempotency');
  });

  it("into the one folder the tsconfig compiles (async-labs/saas@4b27b6a: include ./server/**), so the build's output layout holds", async () => {
    // A trailing comma, as in the real file: tsconfig is JSONC.
    const tsconfig = (body: string) => `{\n  "compilerOptions": { "outDir": "production-server/", },\n  ${body}\n}\n`;
    const files = { 'package.json': pkg('api'), 'server/server.ts': '', 'server/api/team-leader.ts': '', 'static/robots.txt': '' };
    const saas = await repo({ ...files, 'tsconfig.json': tsconfig('"include": ["./server/**/*.ts"]') });
    expect(planPlacement({ root: saas, sources: ['server/api/team-leader.ts:92'] })[0]!.dir).toBe('server/idempotency');
    // A declaration file beside the include does not count; a rootDir names the folder too.
    const typed = await repo({ ...files, 'tsconfig.json': tsconfig('"include": ["server", "types/*.d.ts"]') });
    expect(planPlacement({ root: typed, sources: ['server/api/team-leader.ts:92'] })[0]!.dir).toBe('server/idempotency');
    const rooted = await repo({ ...files, 'tsconfig.json': '{ "compilerOptions": { "rootDir": "./server", "outDir": "dist" } }' });
    expect(planPlacement({ root: rooted, sources: ['server/api/team-leader.ts:92'] })[0]!.dir).toBe('server/idempotency');
    // Two folders compiled, or the whole package: the usual layout (src/ when there is one, else the package folder).
    const both = await repo({ ...files, 'tsconfig.json': tsconfig('"include": ["server", "scripts"]') });
    expect(planPlacement({ root: both, sources: ['server/api/team-leader.ts:92'] })[0]!.dir).toBe('idempotency');
    const whole = await repo({ ...files, 'src/index.ts': '', 'tsconfig.json': tsconfig('"compilerOptions": { "rootDir": "." }, "include": ["src"]').replace('"compilerOptions": { "outDir": "production-server/", },\n  ', '') });
    expect(planPlacement({ root: whole, sources: ['src/index.ts:1'] })[0]!.dir).toBe('src/idempotency');
  });

  it('Nx integrated repo: a project.json marks the project even without a package.json', async () => {
    const root = await repo({ 'package.json': pkg('nx-root'), 'nx.json': '{}', 'apps/billing/project.json': '{}', 'apps/billing/src/app/payments.controller.ts': '' });
    expect(planPlacement({ root, sources: ['apps/billing/src/app/payments.controller.ts:8'] })[0]!.dir).toBe('apps/billing/src/idempotency');
  });

  it('actions in two packages: one placement each; an action without a source goes with the first', async () => {
    const root = await repo({
      'package.json': pkg('root', { workspaces: ['services/*'] }),
      'services/orders/package.json': pkg('orders'),
      'services/orders/src/orders.ts': '',
      'services/payments/package.json': pkg('payments'),
      'services/payments/index.ts': '',
    });
    expect(planPlacement({ root, sources: ['services/orders/src/orders.ts:1', undefined, 'services/payments/index.ts:4'] })).toEqual([
      { packageDir: 'services/orders', dir: 'services/orders/src/idempotency', actions: [0, 1] },
      { packageDir: 'services/payments', dir: 'services/payments/idempotency', actions: [2] },
    ]);
  });

  it('a single-package project keeps src/idempotency', async () => {
    const root = await repo({ 'package.json': pkg('api'), 'src/app.ts': '' });
    expect(planPlacement({ root, sources: ['src/app.ts:1'] })).toEqual([{ packageDir: '', dir: 'src/idempotency', actions: [0] }]);
  });
});

describe('dependencies are printed per package with the project package manager, never installed', () => {
  const missing = { runtime: ['pg', 'prom-client'], dev: ['@types/pg'] };
  it.each([
    ['pnpm', ['pnpm add -F @shop/api pg prom-client', 'pnpm add -F @shop/api -D @types/pg']],
    ['npm', ['npm i -w apps/api pg prom-client', 'npm i -w apps/api -D @types/pg']],
    ['yarn', ['yarn workspace @shop/api add pg prom-client', 'yarn workspace @shop/api add -D @types/pg']],
    ['bun', ['bun add --cwd apps/api pg prom-client', 'bun add --cwd apps/api -d @types/pg']],
  ] as const)('%s', (manager, expected) => {
    expect(installCommands(manager, { packageDir: 'apps/api', name: '@shop/api' }, missing)).toEqual(expected);
  });

  it('the root package needs no workspace flag; a name a shell would read as more is quoted', () => {
    expect(installCommands('npm', { packageDir: '' }, missing)).toEqual(['npm i pg prom-client', 'npm i -D @types/pg']);
    expect(installCommands('pnpm', { packageDir: 'apps/x', name: 'x; rm -rf ~' }, { runtime: ['pg'], dev: [] })).toEqual(["pnpm add -F 'x; rm -rf ~' pg"]);
  });

  it('the root of a pnpm or Yarn 1 workspace gets the flag that allows adding there (pnpm refuses a bare add)', () => {
    expect(installCommands('pnpm', { packageDir: '', workspaceRoot: 'pnpm' }, missing)).toEqual(['pnpm add -w pg prom-client', 'pnpm add -w -D @types/pg']);
    expect(installCommands('yarn', { packageDir: '', workspaceRoot: 'yarn-classic' }, { runtime: ['pg'], dev: [] })).toEqual(['yarn add -W pg']);
    expect(installCommands('pnpm', { packageDir: '' }, { runtime: ['pg'], dev: [] })).toEqual(['pnpm add pg']);
  });

  it('the package manager comes from packageManager, else the lockfile', async () => {
    expect(await detectPackageManager(await repo({ 'package.json': pkg('a', { packageManager: 'yarn@4.1.0' }) }))).toBe('yarn');
    expect(await detectPackageManager(await repo({ 'package.json': pkg('a'), 'pnpm-lock.yaml': '' }))).toBe('pnpm');
    expect(await detectPackageManager(await repo({ 'package.json': pkg('a') }))).toBe('npm');
  });

  it('what the files import, minus what the package declares; test-only imports are dev dependencies', () => {
    const files = [
      { path: 'x/pool.ts', contents: "import pg from 'pg';\nimport { createHash } from 'node:crypto';", class: 'scaffold' as const, role: 'store' as const },
      { path: 'x/metrics.ts', contents: "import { Counter } from 'prom-client';", class: 'scaffold' as const, role: 'metrics' as const },
      { path: 'x/a.test.ts', contents: "import { describe } from '@jest/globals';\nimport express = require('express');", class: 'scaffold' as const, role: 'tests' as const },
    ];
    expect(missingDependencies(files, new Set(['prom-client']), true)).toEqual({ runtime: ['pg'], dev: ['@types/express', '@types/pg', 'express', 'jest'] });
  });
});

describe('scaffoldProject in a workspace with actions in two packages', () => {
  it('writes one scaffold per package, each with its own actions, and says what to add to each', async () => {
    const root = await repo({
      'package.json': pkg('root', { workspaces: ['apps/*'] }),
      'pnpm-lock.yaml': '',
      'apps/api/package.json': pkg('api', { type: 'module', dependencies: { express: '5.0.0' } }),
      'apps/api/src/payments.ts': '',
      'apps/admin/package.json': pkg('admin', { type: 'module' }),
      'apps/admin/src/refunds.ts': '',
    });
    const model = await modelFor('express-stripe-payments');
    expect(model.actions.length).toBeGreaterThan(1);
    model.actions = model.actions.map((action, index) => ({ ...action, source: index === 0 ? 'apps/api/src/payments.ts:3' : 'apps/admin/src/refunds.ts:9' }));
    const project = await scaffoldProject({ root, model, dir: 'apps/api/src/idempotency', packageManager: 'pnpm' });
    const settings = (dir: string) => project.files.find((file) => file.path === `${dir}/settings.ts`)?.contents ?? '';
    expect(settings('apps/api/src/idempotency')).toContain(model.actions[0]!.codeName);
    expect(settings('apps/api/src/idempotency')).not.toContain(`${model.actions[1]!.codeName}:`);
    expect(settings('apps/admin/src/idempotency')).toContain(model.actions[1]!.codeName);
    expect(project.notes).toEqual([
      expect.stringContaining('pnpm add -F api pg prom-client'),
      // The admin package's webhook route helper loads express at run time (express.raw for the signed body).
      expect.stringContaining('pnpm add -F admin express pg prom-client && pnpm add -F admin -D @types/express @types/node @types/pg vitest'),
    ]);
    expect(project.excerpts.middleware?.path).toBe('apps/api/src/idempotency/express.ts');
  });
});

describe('scaffoldProject in a repository of side-by-side projects (no workspaces)', () => {
  it('addresses the package by its folder, with its own package manager: npm -w would fail without a workspace root', async () => {
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00: processor/ and enabler/, no root package.json.
    const root = await repo({
      'processor/package.json': pkg('payment-integration-template', { dependencies: { express: '4.18.2' } }),
      'processor/package-lock.json': '{}',
      'processor/src/payments.ts': '',
      'enabler/package.json': pkg('enabler'),
      'enabler/yarn.lock': '',
    });
    const model = await modelFor('express-stripe-payments');
    model.actions = model.actions.map((action) => ({ ...action, source: 'processor/src/payments.ts:3' }));
    const project = await scaffoldProject({ root, model, dir: 'processor/src/idempotency', packageManager: 'npm' });
    expect(project.notes).toEqual([expect.stringContaining('npm i --prefix processor pg prom-client && npm i --prefix processor -D ')]);
    expect(installCommands('pnpm', { packageDir: 'a b', standalone: true }, { runtime: ['pg'], dev: ['@types/pg'] })).toEqual(["pnpm add --dir 'a b' pg", "pnpm add --dir 'a b' -D @types/pg"]);
    expect(installCommands('yarn', { packageDir: 'api', standalone: true }, { runtime: ['pg'], dev: [] })).toEqual(['yarn --cwd api add pg']);
  });
});

describe('scaffoldProject in a TypeScript app with a plain JavaScript service beside it (no workspaces)', () => {
  it("writes the service's scaffold in JavaScript, and asks it to declare what it imports itself", async () => {
    // The shape of Larriche/orders-bullmq@be502b6: the app in src/ (TypeScript), fake-payment-service/server.js run
    // with node, its own package.json declaring only express; the root declares pg for the app.
    const root = await repo({
      'package.json': pkg('orders', { dependencies: { express: '^5.0.0', pg: '^8.0.0' }, devDependencies: { typescript: '^5.9.0' } }),
      'tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "target": "ES2022", "strict": true, "esModuleInterop": true } }',
      'src/server.ts': '',
      'fake-payment-service/package.json': pkg('fake-payment-service', { dependencies: { express: '^5.1.0' } }),
      'fake-payment-service/server.js': '',
    });
    const model = await modelFor('express-stripe-payments');
    model.actions = model.actions.map((action, index) => ({ ...action, source: index === 0 ? 'fake-payment-service/server.js:29' : 'src/server.ts:3' }));
    const project = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    const service = project.files.filter((file) => file.path.startsWith('fake-payment-service/idempotency/')).map((file) => file.path);
    expect(service).toContain('fake-payment-service/idempotency/index.js');
    expect(service.some((file) => file.endsWith('.ts'))).toBe(false);
    expect(project.files.some((file) => file.path === 'src/idempotency/index.ts')).toBe(true);
    expect(project.notes).toContainEqual(expect.stringContaining('npm i --prefix fake-payment-service pg prom-client'));
  });
});

describe('scaffoldProject in a workspace whose shared library holds a consumer', () => {
  it('gives the library the plain wrapper, not the HTTP adapter of the services beside it (Inventory_ERP_BullMQ@23968a6)', async () => {
    const root = await repo({
      'package.json': pkg('erp', { workspaces: ['packages/*', 'services/*'] }),
      'tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "target": "ES2022", "strict": true, "esModuleInterop": true } }',
      'packages/event-bus/package.json': pkg('@erp/event-bus', { dependencies: { bullmq: '^5.0.0' } }),
      'packages/event-bus/src/bus.ts': '',
      'services/orders/package.json': pkg('@erp/orders', { dependencies: { express: '^4.19.0', pg: '^8.0.0' } }),
      'services/orders/src/routes.ts': '',
    });
    const model = await modelFor('express-stripe-payments');
    model.actions = [{ ...model.actions[0]!, trigger: 'consumer', source: 'packages/event-bus/src/bus.ts:94' }, ...model.actions.slice(1).map((action) => ({ ...action, source: 'services/orders/src/routes.ts:3' }))];
    const project = await scaffoldProject({ root, model, dir: 'services/orders/src/idempotency', packageManager: 'npm' });
    const library = project.files.filter((file) => file.path.startsWith('packages/event-bus/src/idempotency/')).map((file) => file.path);
    expect(library).toContain('packages/event-bus/src/idempotency/plain.ts');
    expect(library).not.toContain('packages/event-bus/src/idempotency/express.ts');
    expect(project.files.some((file) => file.path === 'services/orders/src/idempotency/express.ts')).toBe(true);
  });
});

describe('@types/node in the install hint', () => {
  const at = async (typesNode: string | undefined, typescript?: string, extra: Record<string, string> = {}) => {
    const dev = { '@types/express': '4.17.21', '@types/pg': '8.10.0', vitest: '3.0.0', ...(typesNode ? { '@types/node': typesNode } : {}), ...(typescript ? { typescript } : {}), ...extra };
    const root = await repo({ 'package.json': pkg('api', { dependencies: { express: '4.18.2', pg: '8.11.0', 'prom-client': '15.0.0' }, devDependencies: dev }), 'src/index.ts': '' });
    return (await scaffoldProject({ root, model: await modelFor('express-stripe-payments'), dir: 'src/idempotency', packageManager: 'npm' })).notes;
  };

  it('asks for a newer @types/node when the package pins one without node: modules, none when it has them', async () => {
    expect(await at('^15.12.2')).toEqual([expect.stringMatching(/: npm i -D @types\/node@20$/)]);
    expect(await at('^16.11.0')).toEqual([]);
    expect(await at('^20.11.0')).toEqual([]);
  });

  it("suggests an @types/node the project's TypeScript can parse: 16.11 for TypeScript 4 (today's needs 5)", async () => {
    expect(await at('^15.12.2', '~4.2.3')).toEqual([expect.stringMatching(/: npm i -D @types\/node@16\.11$/)]);
    expect(await at(undefined, '^4.9.5')).toEqual([expect.stringMatching(/: npm i -D @types\/node@16\.11$/)]);
    expect(await at(undefined, '^5.4.0')).toEqual([expect.stringMatching(/: npm i -D @types\/node$/)]);
  });

  it('keeps @types/node 14 when the scaffold imports bare builtins (a Jest 26 project: no node: prefix)', async () => {
    expect((await at('14.14.37', '~4.2.3', { jest: '^26.6.3', 'ts-jest': '^26.5.6', '@types/jest': '^26.0.24' })).join('\n')).not.toContain('@types/node');
  });
});

describe('vitest typings under a Node 10 resolution (stripe-samples/accept-a-payment@1a57c3b2 server/node-typescript)', () => {
  const notesFor = async (compilerOptions: Record<string, unknown>) => {
    const dev = { '@types/express': '4.17.21', '@types/pg': '8.10.0', '@types/node': '^20.14.9', vitest: '4.1.12', typescript: '^5.6.2' };
    const root = await repo({ 'package.json': pkg('api', { type: 'module', dependencies: { express: '4.18.2', pg: '8.11.0', 'prom-client': '15.0.0' }, devDependencies: dev }), 'tsconfig.json': JSON.stringify({ compilerOptions, include: ['src/**/*'] }), 'src/index.ts': '' });
    return (await scaffoldProject({ root, model: await modelFor('express-stripe-payments'), dir: 'src/idempotency', packageManager: 'npm' })).notes;
  };

  it('says that tsc would fail in vitest\'s typings, and the ways out, when library typings are checked', async () => {
    expect(await notesFor({ module: 'ES2020', moduleResolution: 'node', target: 'ES2020' })).toEqual([expect.stringMatching(/node_modules\/vitest\. Set "skipLibCheck": true .*add "src\/idempotency\/\*\*\/\*\.test\.ts" and "src\/idempotency\/store-contract\.ts" to its "exclude"/)]);
  });

  it('says nothing with skipLibCheck or a resolution that reads package exports', async () => {
    expect(await notesFor({ module: 'ES2020', moduleResolution: 'node', skipLibCheck: true })).toEqual([]);
    expect(await notesFor({ module: 'NodeNext' })).toEqual([]);
    expect(await notesFor({ module: 'ESNext', moduleResolution: 'bundler' })).toEqual([]);
  });
});

describe('scaffoldProject for a design whose actions carry no source (placeholder, hand-written config)', () => {
  it('installs into the package that holds the configured folder, not the workspace root', async () => {
    const root = await repo({
      'package.json': pkg('root', { private: true, workspaces: ['apps/*'] }),
      'package-lock.json': '',
      'apps/api/package.json': pkg('api', { dependencies: { express: '4.18.2' }, devDependencies: { '@types/express': '4.17.21', vitest: '3.0.0' } }),
      'apps/api/src/index.ts': '',
    });
    const model = await modelFor('minimal-one-action');
    model.actions = model.actions.map(({ source: _source, ...action }) => action);
    const project = await scaffoldProject({ root, model, dir: 'apps/api/src/idempotency', packageManager: 'npm' });
    expect(project.files.some((file) => file.path === 'apps/api/src/idempotency/index.ts')).toBe(true);
    // npm i at the root would add pg to the root package.json, where the api package's build may not see it.
    expect(project.notes).toEqual([expect.stringMatching(/^The scaffolding in apps\/api\/src\/idempotency needs packages that package api does not declare yet .*: npm i -w apps\/api /)]);
  });
});
