import path from 'node:path';
import { quote } from '../tsLiteral.js';
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
  /** The runner loads tsc's output (no TypeScript loader of its own), so the suite runs from the outDir. */
  readonly runsCompiled: boolean;
}

// The scenarios talk to a real database, 20 requests at once: a loaded CI machine needs more than 2–5 s defaults.
const TIMEOUT = '30_000';

const SKIPPABLE = `// A scenario that does not apply to this configuration is reported as skipped, not silently left out.
const suiteIf = (applies: boolean): ((name: string, fn: () => void) => void) =>
  applies ? describe : describe.skip;
const testIf = (applies: boolean): ((name: string, fn: () => Promise<void> | void) => void) =>
  applies ? it : it.skip;`;

/** expect() with the matchers the suite uses, on node:assert: node:test and mocha ship no expect of their own. */
const ASSERT_EXPECT = `
/**
 * The expect() matchers this suite uses, on node:assert (the runner has no expect of its own). Classes are typed
 * as Function: \`abstract new (...)\` needs TypeScript 4.2.
 */
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
      toBeUndefined: () => check(actual === undefined, 'to be undefined'),
      toBeDefined: () => check(actual !== undefined, 'to be defined'),
      toBeInstanceOf: (type: Function) => check(actual instanceof type, \`to be an instance of \${type.name}\`),
      toMatchObject: (expected: object) => check(matchesObject(actual, expected), \`to match \${show(expected)}\`),
    };
  };
  const rejection = async (test: (error: unknown) => boolean) => assert.rejects(actual as Promise<unknown>, (error: unknown) => test(error));
  return {
    ...matchers(false),
    not: matchers(true),
    resolves: {
      toBe: async (expected: unknown) => {
        const value = await (actual as Promise<unknown>);
        assert.ok(Object.is(value, expected), \`expected \${show(value)} to be \${show(expected)}\`);
      },
    },
    rejects: {
      toBeInstanceOf: (type: Function) => rejection((error) => error instanceof type),
      toThrow: (message: string) => rejection((error) => error instanceof Error && error.message.includes(message)),
    },
  };
}

/** toMatchObject: every property of the expected object is in the actual value, recursively; arrays match exactly. */
function matchesObject(actual: unknown, expected: unknown): boolean {
  // typeof before the null check: TypeScript before 4.8 narrows unknown to object only in this order.
  if (typeof expected !== 'object' || expected === null || Array.isArray(expected)) return isDeepStrictEqual(actual, expected);
  if (typeof actual !== 'object' || actual === null) return false;
  return Object.entries(expected).every(([key, value]) => matchesObject((actual as Record<string, unknown>)[key], value));
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
    runsCompiled: false,
  },
  jest: {
    imports: `import { afterAll, beforeAll, describe, expect, it, jest as jestApi } from '@jest/globals';`,
    helpers: `${SKIPPABLE}\n\njestApi.setTimeout(${TIMEOUT});`,
    suiteCallback: '() => {',
    beforeAll: 'beforeAll',
    afterAll: 'afterAll',
    footer: '',
    runsCompiled: false,
  },
  'node-test': {
    imports: `${ASSERT_IMPORTS}\nimport { after, before, describe, it } from 'node:test';`,
    helpers: SKIPPABLE,
    suiteCallback: '() => {',
    beforeAll: 'before',
    afterAll: 'after',
    footer: ASSERT_EXPECT,
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
    runsCompiled: true,
  },
};

export function runnerPrelude(runner: TestRunner): RunnerPrelude {
  return PRELUDES[runner];
}

/** Where a suite lives in the user's project, so a suite run from compiled output can still read its .sql files. */
export interface SuitePlace {
  /** Project-relative folder of the suite's source file (posix separators). */
  readonly sourceDir: string;
}

const VITEST_IMPORT = /^import \{ ([^}]+) \} from 'vitest';\n/m;
const IMPORT_END = /^(?:import [^\n]* from '[^']+';|\} from '[^']+';)$/gm;
const FILE_BESIDE = /new URL\('([^']+)', import\.meta\.url\)/g;

/**
 * A suite written against Vitest's API (the trigger suites, the store contract) in the project's runner: the runner's
 * own imports (node:test and Mocha get expect() on node:assert), `describe.skipIf` through the runner's skip, the
 * runner's time-out, and for runners that load tsc's output, .sql files read from the source folder when tsc left
 * them behind. Only the names the suite imports are declared, so `noUnusedLocals` projects compile it.
 */
export function adaptSuite(code: string, runner: TestRunner, place?: SuitePlace): string {
  const found = VITEST_IMPORT.exec(code);
  if (!found) throw new Error("bug: a generated suite must import the runner's API in one line from 'vitest'");
  if (runner === 'vitest') return code;
  const names = new Set(found[1]!.split(',').map((name) => name.trim()));
  const prelude = PRELUDES[runner];
  const usesAssert = names.has('expect') && (runner === 'node-test' || runner === 'mocha');
  const imports: string[] = usesAssert ? [ASSERT_IMPORTS] : [];
  const helpers: string[] = [];
  if (runner === 'jest') {
    // Aliased: Jest up to 26 wraps each CommonJS module in a function with a `jest` parameter, so the JavaScript
    // output's `const { jest } = require('@jest/globals')` was a SyntaxError there (hagopj13/node-express-boilerplate).
    imports.push(`import { ${[...names, 'jest as jestApi'].sort().join(', ')} } from '@jest/globals';`);
    helpers.push(`// The suite talks to a real server: a loaded CI machine needs more than Jest's default 5 s.\njestApi.setTimeout(${TIMEOUT});`);
  } else if (runner === 'node-test') {
    const alias: Record<string, string> = { beforeAll: 'before as beforeAll', afterAll: 'after as afterAll', describe: 'describe', it: 'it' };
    const own = [...names].filter((name) => name in alias).map((name) => alias[name]!);
    imports.push(`import { ${own.sort().join(', ')} } from 'node:test';`);
  } else {
    if (names.has('beforeAll')) helpers.push('const beforeAll = before;');
    if (names.has('afterAll')) helpers.push('const afterAll = after;');
    if (names.has('describe'))
      helpers.push(`// Mocha's default 2 s is too short for a real server under load: every suite here gets ${TIMEOUT} ms.
const describe = Object.assign(
  (name: string, fn: () => void) =>
    globalThis.describe(name, function (this: Mocha.Suite) {
      this.timeout(${TIMEOUT});
      fn();
    }),
  { skip: (name: string, fn: () => void) => globalThis.describe.skip(name, fn) },
);`);
  }
  if (code.includes('describe.skipIf(')) {
    helpers.push(`// Vitest's describe.skipIf: a suite whose server is not configured is reported as skipped.
const describeSkipIf = (skip: boolean) => (skip ? describe.skip : describe);`);
  }
  let body = code.replaceAll('describe.skipIf(', 'describeSkipIf(');
  if (prelude.runsCompiled && place && body.includes(', import.meta.url)')) {
    body = body.replace(FILE_BESIDE, (whole, relative: string) => `besideOrSource(${whole}, ${quote(path.posix.join(place.sourceDir, relative))})`);
    imports.unshift("import { existsSync } from 'node:fs';\nimport * as nodePath from 'node:path';");
    helpers.push(`// tsc copies no .sql files: when this runs from compiled output, read them from the source folder.
const besideOrSource = (beside: string | URL, inSource: string): string | URL => (existsSync(beside) ? beside : nodePath.resolve(inSource));`);
  }
  body = body.replace(VITEST_IMPORT, `${imports.join('\n')}\n`);
  const lastImport = [...body.matchAll(IMPORT_END)].at(-1);
  const at = lastImport ? lastImport.index + lastImport[0].length : 0;
  const withHelpers = helpers.length > 0 ? `${body.slice(0, at)}\n\n${helpers.join('\n')}${body.slice(at)}` : body;
  const top = runner === 'mocha' ? '/// <reference types="mocha" />\n' : '';
  return `${top}${withHelpers.trimEnd()}\n${usesAssert ? ASSERT_EXPECT : ''}`;
}

export interface TestRunOptions {
  readonly language: 'typescript' | 'javascript';
  /** Project-relative paths of the generated suites (as the project has them: .ts or .js). */
  readonly suites: readonly string[];
  /** The scaffold folder, project-relative. */
  readonly dir: string;
  /** The project's Jest config (testMatch, testRegex or roots) collects none of the suites where they are. */
  readonly notCollected?: boolean;
  /** node:test suites run by the project's node-tap `test` script. */
  readonly tap?: boolean;
}

/**
 * The README's instructions for running the generated suites with the project's runner: the exact command, and for
 * runners that need TypeScript compiled or transformed, what to add to the project (never changed behind its back).
 */
export function describeTestRun(runner: TestRunner, options: TestRunOptions): { command: string; notes: string } {
  const files = options.suites.join(' ');
  const ts = options.language === 'typescript';
  switch (runner) {
    case 'vitest':
      return { command: `npx vitest run ${options.dir}`, notes: '' };
    case 'jest': {
      const extension = ts ? 'ts' : 'js';
      const collect = options.notCollected
        ? `Your Jest config (\`testMatch\`, \`testRegex\` or \`roots\`) does not collect these suites where they are, and they stay beside the code they import: add \`'**/${options.dir}/**/*.test.${extension}'\` to \`testMatch\` (and the folder to \`roots\` if it sets them); the generator does not edit it.${ts ? ' ' : ''}`
        : '';
      return {
        command: `npx jest ${options.dir}`,
        notes: collect + (ts
          ? "Jest runs the suites through its TypeScript transform. If `jest.config` has none yet, add one (the generator does not edit it): `transform: { '^.+\\\\.ts$': 'ts-jest' }` with ts-jest, or `transform: { '^.+\\\\.ts$': '@swc/jest' }` with @swc/jest. An ES module project (`\"type\": \"module\"`) also needs `extensionsToTreatAsEsm: ['.ts']` and `node --experimental-vm-modules node_modules/jest/bin/jest.js`."
          : ''),
      };
    }
    case 'node-test':
      // node:test prints TAP when its output is not a terminal, which is how tap runs each file.
      if (options.tap) {
        return {
          command: `npm test -- ${files}`,
          notes: `The project tests with tap: its \`test\` script runs these node:test suites like its own files (node:test writes TAP)${ts ? ', with the TypeScript registration the script already passes to node' : ''}. tap 16 and older also checks 100% coverage of what it ran by default; that check is the project's, not the suites': \`npm test -- --no-check-coverage ${files}\` runs them alone.`,
        };
      }
      return ts
        ? {
            command: `node --test ${compiled(options)}`,
            notes: `node:test loads JavaScript: compile first (\`npx tsc\`); the command runs tsc's output (\`<compiled>\` is where tsc writes \`${options.dir}\`, under your tsconfig's \`outDir\`). With tsx installed it runs the sources directly: \`node --import tsx --test ${files}\`; with ts-node: \`node --loader ts-node/esm --test ${files}\` (ES modules) or \`node --require ts-node/register --test ${files}\` (CommonJS).`,
          }
        : { command: `node --test ${files}`, notes: '' };
    case 'mocha':
      return ts
        ? {
            command: `npx mocha ${compiled(options)}`,
            notes: `Mocha loads JavaScript: compile first (\`npx tsc\`); the command runs tsc's output (\`<compiled>\` is where tsc writes \`${options.dir}\`, under your tsconfig's \`outDir\`). With ts-node it runs the sources directly: \`npx mocha --require ts-node/register ${files}\` (CommonJS); with tsx: \`npx mocha --node-option import=tsx ${files}\`.`,
          }
        : { command: `npx mocha ${files}`, notes: '' };
  }
}

function compiled(options: TestRunOptions): string {
  const prefix = `${options.dir.replace(/\/+$/, '')}/`;
  return options.suites.map((suite) => `<compiled>/${(suite.startsWith(prefix) ? suite.slice(prefix.length) : suite).replace(/\.ts$/, '.js')}`).join(' ');
}
