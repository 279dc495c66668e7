import { describe, expect, it } from 'vitest';
import { adaptSuite, describeTestRun } from '../../src/scaffold/profile/runnerPrelude.js';
import { TEST_RUNNERS } from '../../src/scaffold/profile/types.js';
import { readTemplate } from '../../src/scaffold/readTemplate.js';

// Every suite written against Vitest's API that a scaffold ships: the trigger suites and the store contract.
const SUITES = ['webhooks/webhooks.test.ts', 'consumers/consumers.test.ts', 'cron/cron.test.ts', 'reconcile/reconcile.test.ts', 'core/storeContract.ts'];

describe.each(SUITES)('%s in each runner', (template) => {
  const code = readTemplate(`typescript/${template}`);

  it('is left as written for Vitest', () => {
    expect(adaptSuite(code, 'vitest')).toBe(code);
  });

  it.each(TEST_RUNNERS.filter((runner) => runner !== 'vitest'))('uses only %s API', (runner) => {
    const out = adaptSuite(code, runner, { sourceDir: 'src/idempotency/sub' });
    expect(out).not.toContain('vitest');
    expect(out).not.toContain('.skipIf(');
    if (runner === 'jest') expect(out).toMatch(/from '@jest\/globals';\n[\s\S]*jestApi\.setTimeout\(30_000\);/);
    if (runner === 'node-test') expect(out).toMatch(/^import \{[^}]*\} from 'node:test';$/m);
    if (runner === 'mocha') {
      expect(out.startsWith('/// <reference types="mocha" />\n')).toBe(true);
      expect(out).toContain('this.timeout(30_000);');
    }
    if (runner === 'node-test' || runner === 'mocha') {
      expect(out).toContain('function expect(actual: unknown)');
      // tsc's output has no .sql beside it: the suite falls back to the source folder.
      if (code.includes('import.meta.url')) expect(out).toContain("'src/idempotency/migrations/001_create_idempotency_store.sql'");
    } else {
      expect(out).not.toContain('besideOrSource');
    }
  });
});

describe('adaptSuite', () => {
  it('refuses a suite that does not import its API from vitest in one line (a template bug, not user input)', () => {
    expect(() => adaptSuite("import { describe } from 'node:test';\n", 'mocha')).toThrow(/bug/);
  });

  it("declares only the names the suite imports, so noUnusedLocals projects compile it", () => {
    const out = adaptSuite("import { describe, it } from 'vitest';\n\ndescribe('x', () => it('y', () => undefined));\n", 'node-test');
    expect(out).toContain("import { describe, it } from 'node:test';");
    expect(out).not.toContain('before');
    expect(out).not.toContain('node:assert');
  });
});

describe('describeTestRun', () => {
  const suites = ['src/idempotency/idempotency.test.ts', 'src/idempotency/webhooks/webhooks.test.ts'];
  const run = (runner: (typeof TEST_RUNNERS)[number], language: 'typescript' | 'javascript' = 'typescript') =>
    describeTestRun(runner, { language, dir: 'src/idempotency', suites: language === 'typescript' ? suites : suites.map((file) => file.replace(/\.ts$/, '.js')) });

  it("a tap project runs the node:test suites through its own test script (tap reads node:test's TAP)", () => {
    // The shape of TomDoesTech/fastify-prisma-rest-api@43b7fc1: "test": "tap --node-arg=--require=ts-node/register".
    const tap = describeTestRun('node-test', { language: 'typescript', dir: 'src/idempotency', suites, tap: true });
    expect(tap.command).toBe('npm test -- src/idempotency/idempotency.test.ts src/idempotency/webhooks/webhooks.test.ts');
    expect(tap.notes).toContain('with the TypeScript registration the script already passes to node');
    expect(tap.notes).toContain('--no-check-coverage');
  });

  it('names the exact command of each runner', () => {
    expect(run('vitest').command).toBe('npx vitest run src/idempotency');
    expect(run('jest').command).toBe('npx jest src/idempotency');
    expect(run('node-test').command).toBe('node --test <compiled>/idempotency.test.js <compiled>/webhooks/webhooks.test.js');
    expect(run('mocha').command).toBe('npx mocha <compiled>/idempotency.test.js <compiled>/webhooks/webhooks.test.js');
    expect(run('node-test', 'javascript').command).toBe('node --test src/idempotency/idempotency.test.js src/idempotency/webhooks/webhooks.test.js');
    expect(run('mocha', 'javascript').command).toBe('npx mocha src/idempotency/idempotency.test.js src/idempotency/webhooks/webhooks.test.js');
  });

  it('says which config entry a TypeScript Jest project needs and how loaders run the sources, without editing anything', () => {
    expect(run('jest').notes).toContain("transform: { '^.+\\\\.ts$': 'ts-jest' }");
    expect(run('jest').notes).toContain("'@swc/jest'");
    expect(run('node-test').notes).toContain('node --import tsx --test src/idempotency/idempotency.test.ts');
    expect(run('mocha').notes).toContain('npx mocha --require ts-node/register src/idempotency/idempotency.test.ts');
    expect(run('vitest').notes).toBe('');
    expect(run('jest', 'javascript').notes).toBe('');
  });
});
