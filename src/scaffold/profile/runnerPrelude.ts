import type { TestRunner } from './types.js';

/** What differs between test runners in the generated suite; the scenarios themselves are written once. */
export interface RunnerPrelude {
  /** Import lines for the runner's API (and node:assert where the runner has no expect). */
  readonly imports: string;
  /** Declarations after the imports: `suiteIf`/`testIf` (skip a scenario that does not apply), time-outs. */
  readonly helpers: string;
  /** How the suite's callback opens (mocha sets its time-out through `this`). */
  readonly suiteCallback: string;
  readonly beforeAll: string;
  readonly afterAll: string;
  /** Appended at the end of the file: the expect() of runners that have none. */
  readonly footer: string;
  /** The command that runs the suite, for the README. */
  readonly command: string;
  /** The runner loads tsc's output (no TypeScript loader of its own), so the suite runs from the outDir. */
  readonly runsCompiled: boolean;
}

// The scenarios talk to a real database, 20 requests at once: a loaded CI machine needs more than 2–5 s defaults.
const TIMEOUT = '30_000';

const SKIPPABLE = `// A scenario that does not apply to this configuration is reported as skipped, not silently left out.
const suiteIf = (applies: boolean): ((name: string, fn: () => void) => void) => (applies ? describe : describe.skip);
const testIf = (applies: boolean): ((name: string, fn: () => Promise<void> | void) => void) => (applies ? it : it.skip);`;

/** expect() with the matchers the suite uses, on node:assert: node:test and mocha ship no expect of their own. */
const ASSERT_EXPECT = `
/** The expect() matchers this suite uses, on node:assert (the runner has no expect of its own). */
function expect(actual: unknown) {
  const show = (value: unknown) => inspect(value, { depth: 3 });
  const matchers = (negated: boolean) => {
    const check = (pass: boolean, what: string) => assert.ok(pass !== negated, \`expected \${show(actual)} \${negated ? 'not ' : ''}\${what}\`);
    return {
      toBe: (expected: unknown) => check(Object.is(actual, expected), \`to be \${show(expected)}\`),
      toEqual: (expected: unknown) => check(isDeepStrictEqual(actual, expected), \`to equal \${show(expected)}\`),
      toContain: (item: unknown) => check((actual as { includes(item: unknown): boolean }).includes(item), \`to contain \${show(item)}\`),
      toMatch: (pattern: RegExp) => check(pattern.test(String(actual)), \`to match \${String(pattern)}\`),
      toBeNull: () => check(actual === null, 'to be null'),
      toBeGreaterThan: (floor: number) => check((actual as number) > floor, \`to be greater than \${floor}\`),
      toHaveLength: (length: number) => check((actual as { length: number }).length === length, \`to have length \${length}\`),
    };
  };
  const rejection = async (test: (error: unknown) => boolean) => assert.rejects(actual as Promise<unknown>, (error: unknown) => test(error));
  return {
    ...matchers(false),
    not: matchers(true),
    rejects: {
      toBeInstanceOf: (type: abstract new (...args: never[]) => unknown) => rejection((error) => error instanceof type),
      toThrow: (message: string) => rejection((error) => error instanceof Error && error.message.includes(message)),
    },
  };
}
`;

const ASSERT_IMPORTS = `import { strict as assert } from 'node:assert';
import { inspect, isDeepStrictEqual } from 'node:util';`;

const PRELUDES: Record<TestRunner, RunnerPrelude> = {
  vitest: {
    imports: `import { afterAll, beforeAll, describe, expect, it } from 'vitest';`,
    helpers: SKIPPABLE,
    suiteCallback: '() => {',
    beforeAll: 'beforeAll',
    afterAll: 'afterAll',
    footer: '',
    command: 'npx vitest run',
    runsCompiled: false,
  },
  jest: {
    imports: `import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';`,
    helpers: `${SKIPPABLE}\n\njest.setTimeout(${TIMEOUT});`,
    suiteCallback: '() => {',
    beforeAll: 'beforeAll',
    afterAll: 'afterAll',
    footer: '',
    command: 'npx jest',
    runsCompiled: false,
  },
  'node-test': {
    imports: `${ASSERT_IMPORTS}\nimport { after, before, describe, it } from 'node:test';`,
    helpers: SKIPPABLE,
    suiteCallback: '() => {',
    beforeAll: 'before',
    afterAll: 'after',
    footer: ASSERT_EXPECT,
    command: 'node --test (on the compiled files)',
    runsCompiled: true,
  },
  mocha: {
    // Mocha's globals; the reference brings their types whatever tsconfig "types" lists.
    imports: `/// <reference types="mocha" />\n${ASSERT_IMPORTS}`,
    helpers: `// A scenario that does not apply to this configuration is reported as skipped, not silently left out.
const suiteIf = (applies: boolean): ((name: string, fn: (this: Mocha.Suite) => void) => void) => (applies ? describe : describe.skip);
const testIf = (applies: boolean): ((name: string, fn: () => Promise<void> | void) => void) => (applies ? it : it.skip);`,
    suiteCallback: `function (this: Mocha.Suite) {\n  this.timeout(${TIMEOUT});`,
    beforeAll: 'before',
    afterAll: 'after',
    footer: ASSERT_EXPECT,
    command: 'npx mocha (on the compiled files)',
    runsCompiled: true,
  },
};

export function runnerPrelude(runner: TestRunner): RunnerPrelude {
  return PRELUDES[runner];
}
