import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { formatOptions } from '../../src/emit/format.js';
import { findTarget, referenceTarget, type ModuleType, type TestRunner } from '../../src/scaffold/index.js';
import { toJavaScriptFiles } from '../../src/scaffold/javascript/toJavaScriptFiles.js';
import type { ScaffoldFile, TargetContext } from '../../src/scaffold/types.js';
import { modelFor, ROOT } from './generateInto.js';

// Emitters that print a file's JavaScript themselves (ScaffoldFile.javascript) spare a JavaScript generate the
// TypeScript compiler and prettier. What they print must be byte for byte what the old path gives: the TypeScript
// transpiled (types to JSDoc, CommonJS rewrite) and formatted in the house style; README code blocks as transpiled.

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
  // plain-js (fixtures/projects): Express, MySQL, Jest, CommonJS, as init configures it.
  { label: 'plain-js project', fixture: 'express-js-orders', patch: asJavaScript({ database: 'mysql', testFramework: 'jest' }) },
];

/** The files as the old path makes them: transpiled (README blocks too), then prettier in the house style. */
async function transpiledAndFormatted(files: readonly ScaffoldFile[], moduleType: ModuleType, runner: TestRunner): Promise<Map<string, string>> {
  const old = toJavaScriptFiles(
    files.filter((file) => file.javascript !== undefined).map(({ javascript: _direct, ...file }) => file),
    moduleType,
    { esmTests: runner === 'vitest' },
  );
  const out = new Map<string, string>();
  for (const file of old) out.set(file.path, file.role === 'readme' ? file.contents : await prettier.format(file.contents, formatOptions(file.path)));
  return out;
}

describe('JavaScript printed by the emitters is what transpiling and formatting gives', () => {
  it.each(CASES)('$label', async ({ fixture, patch, overflows, providers }) => {
    const model = await modelFor(fixture, patch);
    if (providers) expect([...new Set(model.providers.map((provider) => provider.id))].sort()).toEqual(providers);
    const target = findTarget(model.stack) ?? referenceTarget(model.stack)!;
    const runner = (RUNNERS.find((name) => name === model.stack.testFramework) ?? 'vitest') as TestRunner;
    for (const moduleType of MODULE_TYPES) {
      const context: TargetContext = { testRunner: runner, testModuleSystem: runner === 'vitest' || moduleType === 'module' ? 'esm' : 'commonjs', scaffoldDir: 'src/idempotency', javascript: moduleType };
      const files = target.files(model, context);
      const direct = files.filter((file) => file.javascript !== undefined);
      if (!overflows) expect(direct.map((file) => file.path)).toContain('settings.ts');
      expect(direct.map((file) => file.path)).toContain('index.ts');
      if (!/nestjs/.test(model.stack.framework)) expect(direct.map((file) => file.path)).toContain('README.md');
      if (!/nestjs/.test(model.stack.framework) && files.some((file) => file.path === 'TRIGGERS.md')) expect(direct.map((file) => file.path)).toContain('TRIGGERS.md');
      if (['postgres', 'mysql', 'sqlite'].includes(model.stack.database)) expect(direct.map((file) => file.path)).toContain('cleanup-job.ts');
      if (files.some((file) => file.path === 'reconcile/job.ts')) expect(direct.map((file) => file.path)).toContain('reconcile/job.ts');
      if (model.providers.length > 0) expect(direct.map((file) => file.path)).toContain('providers.ts');
      const expected = await transpiledAndFormatted(files, moduleType, runner);
      for (const file of direct) {
        const jsPath = file.role === 'readme' ? file.path : file.path.replace(/\.ts$/, '.js');
        expect(file.javascript, `${file.path} (${moduleType})`).toBe(expected.get(jsPath));
      }
    }
  });
});
