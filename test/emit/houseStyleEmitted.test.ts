import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { formatOptions, withFastParser } from '../../src/emit/format.js';
import { fitsHouseWidth } from '../../src/scaffold/houseStyle.js';
import { generateScaffold, type ModuleType } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from '../scaffold/generateInto.js';

const FIXTURES = readdirSync(path.join(ROOT, 'fixtures/configs'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => name.slice(0, -'.json'.length));
const STORES = ['postgres', 'mysql', 'sqlite', 'redis', 'dynamodb'] as const;
const FRAMEWORKS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none'] as const;

interface Case {
  label: string;
  fixture: string;
  patch?: (raw: Record<string, unknown>) => void;
  moduleType?: ModuleType;
}
const stack = (raw: Record<string, unknown>) => raw.stack as Record<string, unknown>;
// Every fixture as configured; each store and framework on the lease-mode (Stripe) design and on a transactional
// one; and the JavaScript fixtures as TypeScript, and as JavaScript in both module formats.
const CASES: Case[] = [
  ...FIXTURES.map((fixture) => ({ label: fixture, fixture })),
  ...['express-stripe-payments', 'minimal-one-action'].flatMap((fixture) => [
    ...STORES.map((database) => ({ label: `${fixture} on ${database}`, fixture, patch: (raw: Record<string, unknown>) => void Object.assign(stack(raw), { database }) })),
    ...FRAMEWORKS.map((framework) => ({ label: `${fixture} with ${framework}`, fixture, patch: (raw: Record<string, unknown>) => void Object.assign(stack(raw), { framework }) })),
  ]),
  // Data-dependent widths around the 110-column limit: settings.ts lays out the fields and routes itself.
  ...[4, 5, 6, 7, 8, 9].map((count) => ({
    label: `minimal-one-action with ${count} significant fields and a long route`,
    fixture: 'minimal-one-action',
    patch: (raw: Record<string, unknown>) => {
      const [action] = raw.actions as Array<Record<string, unknown>>;
      Object.assign(action!, { significantFields: Array.from({ length: count }, (_, i) => `lineItem${i}.amountInCents`), route: `POST /${'segment/'.repeat(count + 4)}bookings` });
    },
  })),
  // A form-posted action (key.field): the suites of the frameworks that parse forms add the form scenarios.
  ...(['express', 'nestjs'] as const).map((framework) => ({
    label: `minimal-one-action posted by a form, with ${framework}`,
    fixture: 'minimal-one-action',
    patch: (raw: Record<string, unknown>) => {
      Object.assign(stack(raw), { framework });
      (raw.actions as Array<Record<string, unknown>>)[0]!.key = { source: 'client', field: 'bookingKey' };
    },
  })),
  ...(['module', 'commonjs'] as const).map((moduleType) => ({
    label: `express-js-orders posted by a form, ${moduleType}`,
    fixture: 'express-js-orders',
    moduleType,
    patch: (raw: Record<string, unknown>) => {
      for (const action of raw.actions as Array<Record<string, unknown>>) if (action.trigger === 'http' && (action.key as { source?: string } | undefined)?.source !== 'derived') action.key = { source: 'client', field: 'orderKey' };
    },
  })),
  { label: 'express-js-orders as TypeScript', fixture: 'express-js-orders', patch: (raw) => void Object.assign(stack(raw), { language: 'typescript' }) },
  { label: 'express-js-orders, ES modules', fixture: 'express-js-orders', moduleType: 'module' },
  { label: 'express-js-orders, CommonJS', fixture: 'express-js-orders', moduleType: 'commonjs' },
];

/** The files generate would hand to prettier (formatFiles' filter). */
const FORMATTABLE = /\.(md|ts|js|mjs|cjs|tsx|json|ya?ml)$/;

// generate skips prettier for a file the scaffold marks as formatted (when the project has no prettier config of its
// own), so such a file must be exactly what prettier would make of it in the house style.
describe('emitted scaffolding marked as house style is what prettier prints', () => {
  it.each(CASES)('$label', async ({ fixture, patch, moduleType }) => {
    const model = await modelFor(fixture, patch);
    const files = generateScaffold(model, { dir: 'src/idempotency', ...(moduleType ? { moduleType } : {}) }).filter((file) => FORMATTABLE.test(file.path));
    const problems: string[] = [];
    // Suites adapted to another runner than vitest are still formatted by prettier in generate; any other file of a
    // TypeScript project must be marked, so generate need not format it.
    const adaptedSuite = (file: (typeof files)[number]) => file.role === 'tests' && !file.contents.includes(" from 'vitest';");
    // settings.ts and idempotency.test.ts fall back to prettier when a value (a long route or action name, say) leaves
    // a line too long for the house style.
    const overflowing = (file: (typeof files)[number]) =>
      (file.path.endsWith('/settings.ts') && !fitsHouseWidth(file.contents)) || (file.path.endsWith('/idempotency.test.ts') && !fitsHouseWidth(file.contents, { unbreakable: true }));
    for (const file of files) {
      if (model.stack.language !== 'javascript' && !file.formatted && !adaptedSuite(file) && !overflowing(file)) {
        problems.push(`${file.path}: not marked formatted`);
      }
      if (!file.formatted) continue;
      const printed = await prettier.format(file.contents, withFastParser(formatOptions(file.path)));
      if (printed !== file.contents) problems.push(`${file.path}: prettier changes it, first at line ${firstDifference(file.contents, printed)}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});

function firstDifference(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? left.length : index) + 1;
}
