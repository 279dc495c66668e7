import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { formatOptions } from '../../src/emit/format.js';
import { inspectProject } from '../../src/inspect/index.js';
import { buildDesign } from '../../src/model/index.js';
import type { DesignModel } from '../../src/model/types.js';
import { buildConfig } from '../../src/questions/buildConfig.js';
import { resolveAnswers } from '../../src/questions/resolveAnswers.js';
import { detectModuleType, findTarget, referenceTarget, type ModuleType, type TestRunner } from '../../src/scaffold/index.js';
import { buildPrecompiledTable, buildSuiteTables, usePrecompiledTable } from '../../src/scaffold/javascript/precompiled.js';
import { adaptedSuites, renderedSuites, suitesWithHoles } from '../../src/scaffold/javascript/renderedSuites.js';
import { toJavaScriptFiles } from '../../src/scaffold/javascript/toJavaScriptFiles.js';
import type { ScaffoldFile, TargetContext } from '../../src/scaffold/types.js';
import { modelFor, ROOT } from './generateInto.js';

// Emitters that print a file's JavaScript themselves (ScaffoldFile.javascript) spare a JavaScript generate the
// TypeScript compiler and prettier. What they print must be byte for byte what the old path gives: the TypeScript
// transpiled (types to JSDoc, CommonJS rewrite) and formatted in the house style; README code blocks as transpiled.
// The test suites are printed from pieces the build precompiles (suiteJavaScript.ts): the table is built here as
// `npm run build` builds it, so every suite is compared for each runner, module format, store and framework below.

const FIXTURES = readdirSync(path.join(ROOT, 'fixtures/configs'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => name.slice(0, -'.json'.length));
const STORES = ['postgres', 'mysql', 'sqlite', 'redis', 'dynamodb'] as const;
const FRAMEWORKS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none'] as const;
const RUNNERS: readonly TestRunner[] = ['vitest', 'jest', 'mocha', 'node-test'];
const MODULE_TYPES: readonly ModuleType[] = ['module', 'commonjs'];

interface Case {
  label: string;
  fixture: string;
  patch: (raw: Record<string, unknown>) => void;
  /** Provider ids the design must hold (so each provider's helpers are compared). */
  providers?: string[];
  /** A value leaves a line too long, so settings.ts goes the old way (prettier breaks what it can). */
  overflows?: boolean;
  /** Where the scaffold goes (default src/idempotency): Mocha and node:test suites name it. */
  scaffoldDir?: string;
}
const stack = (raw: Record<string, unknown>) => raw.stack as Record<string, unknown>;
const asJavaScript = (extra: Record<string, unknown> = {}) => (raw: Record<string, unknown>) => void Object.assign(stack(raw), { language: 'javascript', ...extra });

// Every fixture config as JavaScript with each runner; each store on a lease-mode (Stripe) and a transactional design.
const CASES: Case[] = [
  ...FIXTURES.flatMap((fixture) => RUNNERS.map((runner) => ({ label: `${fixture}, ${runner}`, fixture, patch: asJavaScript({ testFramework: runner }) }))),
  ...['express-stripe-payments', 'minimal-one-action'].flatMap((fixture) => [
    ...STORES.map((database) => ({ label: `${fixture} on ${database}`, fixture, patch: asJavaScript({ database }) })),
    ...FRAMEWORKS.map((framework) => ({ label: `${fixture} with ${framework}`, fixture, patch: asJavaScript({ framework }) })),
  ]),
  // A form-posted action (key.field): the Express suite's form scenarios, with each runner.
  ...RUNNERS.map((runner) => ({
    label: `minimal-one-action posted by a form, ${runner}`,
    fixture: 'minimal-one-action',
    patch: (raw: Record<string, unknown>) => {
      asJavaScript({ framework: 'express', testFramework: runner })(raw);
      (raw.actions as Array<Record<string, unknown>>)[0]!.key = { source: 'client', field: 'bookingKey' };
    },
  })),
  // Each broker's consumer example in TRIGGERS.md.
  ...['none', 'bullmq', 'bull', 'kafka', 'rabbitmq', 'sqs', 'nats'].map((broker) => ({ label: `worker-cron-no-payments with ${broker}`, fixture: 'worker-cron-no-payments', patch: asJavaScript({ broker }) })),
  // Data-dependent widths around the 110-column limit, as in test/emit/houseStyleEmitted.test.ts.
  ...[4, 5, 6, 7, 8, 9].map((count) => ({
    label: `minimal-one-action with ${count} significant fields and a long route`,
    fixture: 'minimal-one-action',
    overflows: true,
    patch: (raw: Record<string, unknown>) => {
      asJavaScript()(raw);
      const [action] = raw.actions as Array<Record<string, unknown>>;
      Object.assign(action!, { significantFields: Array.from({ length: count }, (_, i) => `lineItem${i}.amountInCents`), route: `POST /${'segment/'.repeat(count + 4)}bookings` });
    },
  })),
  // Every payment provider's helpers in providers.ts.
  {
    label: 'express-stripe-payments with every provider',
    fixture: 'express-stripe-payments',
    providers: ['adyen', 'bank-transfer', 'paypal', 'stripe'],
    patch: (raw: Record<string, unknown>) => {
      asJavaScript()(raw);
      raw.payments = ['stripe', 'adyen', 'paypal'];
      const actions = raw.actions as Array<Record<string, unknown>>;
      Object.assign(actions[0]!, { provider: 'adyen' });
      Object.assign(actions[1] ?? actions[0]!, { provider: 'paypal' });
      actions.push({ ...actions[0]!, name: 'payByTransfer', route: 'POST /transfers', provider: 'bank-transfer' });
      actions.push({ ...actions[0]!, name: 'payByCard', route: 'POST /cards', provider: 'stripe' });
    },
  },
  // Mocha and node:test suites read their .sql files from the scaffold folder too: another folder, a deeper one.
  ...(['mocha', 'node-test'] as const).flatMap((runner) =>
    ['lib/idempotency', 'packages/api/src/idempotency', 'packages/api/src/payments/idempotency-layer'].map((scaffoldDir) => ({
      label: `express-js-orders with ${runner} in ${scaffoldDir}`,
      fixture: 'express-js-orders',
      scaffoldDir,
      // The longest leaves the migration's line too wide for the house style: that suite keeps the old path.
      overflows: scaffoldDir.length > 40,
      patch: asJavaScript({ testFramework: runner }),
    })),
  ),
  // Each trigger kind alone (no HTTP action): the suite drives the core as the trigger's entry point does.
  ...(['webhook', 'consumer', 'cron'] as const).flatMap((trigger) =>
    RUNNERS.map((runner) => ({
      label: `a ${trigger} only, ${runner}`,
      fixture: 'minimal-one-action',
      patch: (raw: Record<string, unknown>) => {
        asJavaScript({ testFramework: runner, ...(trigger === 'consumer' ? { broker: 'bullmq' } : {}) })(raw);
        const [action] = raw.actions as Array<Record<string, unknown>>;
        Object.assign(action!, { trigger, name: `handle${trigger}Event`, ...(trigger === 'webhook' ? { provider: 'stripe' } : {}) });
      },
    })),
  ),
  // plain-js's stack (Express, MySQL, Jest) on a design with payments and webhooks.
  { label: 'express-js-orders on MySQL with Jest', fixture: 'express-js-orders', patch: asJavaScript({ database: 'mysql', testFramework: 'jest' }) },
];

/** The files as the old path makes them: transpiled (README blocks too), then prettier in the house style. */
async function transpiledAndFormatted(files: readonly ScaffoldFile[], moduleType: ModuleType, runner: TestRunner): Promise<Map<string, string>> {
  const old = toJavaScriptFiles(
    files.filter((file) => file.javascript !== undefined || file.javascriptToFormat !== undefined).map(({ javascript: _direct, javascriptToFormat: _toFormat, ...file }) => file),
    moduleType,
    { esmTests: runner === 'vitest' },
  );
  const out = new Map<string, string>();
  for (const file of old) out.set(file.path, file.role === 'readme' ? file.contents : await prettier.format(file.contents, formatOptions(file.path)));
  return out;
}

/** Every file an emitter printed as JavaScript is what the old path gives, for the project's runner, in `moduleTypes`. */
async function expectOldPathBytes(model: DesignModel, moduleTypes: readonly ModuleType[], overflows = false, scaffoldDir = 'src/idempotency'): Promise<void> {
  const target = findTarget(model.stack) ?? referenceTarget(model.stack)!;
  const runner = (RUNNERS.find((name) => name === model.stack.testFramework) ?? 'vitest') as TestRunner;
  for (const moduleType of moduleTypes) {
    const context: TargetContext = { testRunner: runner, testModuleSystem: runner === 'vitest' || moduleType === 'module' ? 'esm' : 'commonjs', scaffoldDir, javascript: moduleType };
    const files = target.files(model, context);
    const direct = files.filter((file) => file.javascript !== undefined).map((file) => file.path);
    if (!overflows) expect(direct).toContain('settings.ts');
    expect(direct).toContain('index.ts');
    const nest = /nestjs/.test(model.stack.framework);
    for (const path of ['README.md', 'TRIGGERS.md', 'reconcile/job.ts', 'providers.ts', 'cleanup-job.ts']) {
      if (files.some((file) => file.path === path) && !(nest && path.endsWith('.md'))) expect(direct, `${path} is printed as JavaScript`).toContain(path);
    }
    // Every suite too (vitest's copied suites are the precompiled templates themselves), but NestJS's decorated
    // controller and a value too wide for its line, which keep the old path.
    for (const file of files.filter((candidate) => candidate.role === 'tests' && candidate.path.endsWith('.ts'))) {
      const copied = runner === 'vitest' && file.path !== 'idempotency.test.ts';
      if (!copied && !(nest && file.path === 'idempotency.test.ts') && !overflows) expect(direct, `${file.path} (${runner}, ${moduleType}) is printed as JavaScript`).toContain(file.path);
    }
    const expected = await transpiledAndFormatted(files, moduleType, runner);
    for (const file of files.filter((candidate) => candidate.javascript !== undefined)) {
      const jsPath = file.role === 'readme' ? file.path : file.path.replace(/\.ts$/, '.js');
      expect(file.javascript, `${file.path} (${moduleType})`).toBe(expected.get(jsPath));
    }
    // A value too wide for its line: the JavaScript printed all the same, prettier's layout then the old path's.
    const toFormat = files.filter((candidate) => candidate.javascriptToFormat !== undefined);
    // settings.ts and the suites are printed either way: the compiler is not needed for them.
    for (const file of files.filter((candidate) => candidate.path === 'settings.ts' || (candidate.role === 'tests' && candidate.path.endsWith('.ts') && !(runner === 'vitest' && candidate.path !== 'idempotency.test.ts')))) {
      if (/nestjs/.test(model.stack.framework) && file.path === 'idempotency.test.ts') continue;
      expect(file.javascript ?? file.javascriptToFormat, `${file.path} (${runner}, ${moduleType}) is printed`).toBeDefined();
    }
    for (const file of toFormat) {
      const jsPath = file.path.replace(/\.ts$/, '.js');
      expect(await prettier.format(file.javascriptToFormat!, formatOptions(jsPath)), `${file.path} (${moduleType}), laid out by prettier`).toBe(expected.get(jsPath));
    }
  }
}

// The JavaScript projects under fixtures/projects, configured as `init --yes` configures them.
const PROJECTS = readdirSync(path.join(ROOT, 'fixtures/projects')).filter((name) =>
  (readdirSync(path.join(ROOT, 'fixtures/projects', name), { recursive: true }) as string[]).some((file) => file.endsWith('.js') && !file.includes('node_modules')),
);

const TEMPLATES = fileURLToPath(new URL('../../templates/scaffold/typescript/', import.meta.url));

describe('JavaScript printed by the emitters is what transpiling and formatting gives', () => {
  beforeAll(async () => {
    const table = await buildPrecompiledTable(TEMPLATES, undefined, renderedSuites());
    for (const suites of (await buildSuiteTables(suitesWithHoles(), adaptedSuites())).values()) for (const [key, js] of suites) table.set(key, js);
    usePrecompiledTable(table);
  }, 600_000);
  afterAll(() => usePrecompiledTable(undefined));

  it.each(CASES)('$label', async ({ fixture, patch, overflows, providers, scaffoldDir }) => {
    const model = await modelFor(fixture, patch);
    if (providers) expect([...new Set(model.providers.map((provider) => provider.id))].sort()).toEqual(providers);
    await expectOldPathBytes(model, MODULE_TYPES, overflows, scaffoldDir);
  });

  it.each(PROJECTS)('fixtures/projects/%s, when it is JavaScript', { timeout: 120_000 }, async (name) => {
    const root = path.join(ROOT, 'fixtures/projects', name);
    const inspection = await inspectProject(root);
    const resolution = await resolveAnswers({ flags: {}, config: {}, inspection, cwd: root, interactive: false, yes: true });
    const config = parseConfig(JSON.stringify(buildConfig({}, resolution, false)));
    if (name === 'plain-js') expect(config.stack.language).toBe('javascript');
    if (config.stack.language !== 'javascript') return;
    const model = buildDesign(config, inspection, { now: new Date('2026-01-15T00:00:00Z') });
    await expectOldPathBytes(model, [await detectModuleType(root, 'src/idempotency')]);
  });
});
