/** The test runners the generated suite can be written for. */
export const TEST_RUNNERS = ['vitest', 'jest', 'node-test', 'mocha'] as const;
export type TestRunner = (typeof TEST_RUNNERS)[number];

/**
 * How the user's project compiles and runs code, read from its tsconfig (with its `extends` chain) and package.json.
 * The targets write one TypeScript source; `applyProfile` adapts it to this.
 */
export interface ProjectProfile {
  language: 'typescript' | 'javascript';
  /** The folder of the package.json the scaffold belongs to, relative to the project root, when not the root. */
  packageDir?: string;
  /** What the emitted files are when Node loads them. */
  moduleSystem: 'esm' | 'commonjs';
  /** `./core.js` (Node ESM, NodeNext) or `./core` (bundler, CommonJS resolution, ts-jest). */
  relativeImports: 'js-extension' | 'extensionless';
  /**
   * A default import of a CommonJS package (`import pg from 'pg'`) works: always in ES modules, and in CommonJS
   * output only with esModuleInterop (without it `pg_1.default` is undefined at run time).
   */
  defaultImportInterop: boolean;
  /** The newest ECMAScript library the project's lib/target allows (2019 for target ES2019 without lib). */
  esLibrary: number;
  testRunner: TestRunner;
  /**
   * 'spec' when the project's Jest only collects `*.spec.ts` (NestJS's default `testRegex`): the generated suites
   * are named that way, or `jest` would never run them. Undefined = `*.test.ts`.
   */
  testFileSuffix?: 'spec';
  /** The project's Jest config collects neither name in the scaffold folder: the README says what to add to it. */
  jestIgnoresSuites?: boolean;
  /**
   * The project tests with node-tap, whose `test` script runs the node:test suites (they print TAP): the README's
   * command is that script, with the project's own TypeScript registration.
   */
  tapHarness?: boolean;
  /**
   * TypeScript output under a Jest with no TypeScript transform (no ts-jest, @swc/jest or Babel TypeScript preset in
   * its dependencies, nothing in its config): it would fail on the suites' first type annotation. The terminal says
   * so and the install line adds `ts-jest@<Jest's major>`; this is that specifier.
   */
  jestTransform?: string;
  /** compilerOptions.paths with targets relative to the project root (posix), as the extends chain resolves them. */
  paths: Record<string, string[]>;
  /**
   * How the project's own files import the scaffold folder through its path alias (`@/idempotency`, with
   * `/index.js` under Node ESM resolution); undefined when no alias covers the folder (relative imports then).
   */
  scaffoldImport?: string;
  /** The tsconfig the profile was read from, relative to the project root; undefined when there is none. */
  tsconfig?: string;
  /**
   * `extends` entries of that tsconfig that could not be read (a package base such as fastify-tsconfig before
   * `npm install`, or one only outside the project): the profile lacks their options, and generate says so.
   */
  unreadExtends?: readonly string[];
  /**
   * The project's TypeScript as major * 100 + minor (3.9 → 309), when older than the syntax the templates use
   * (inline `type` import specifiers need 4.5, `satisfies` 4.9); undefined = current.
   */
  typescriptVersion?: number;
  /** Builtins are imported as `crypto`, not `node:crypto`: the project's Jest (before 27) cannot resolve the prefix. */
  bareBuiltins?: boolean;
  /**
   * The project's Jest (before 28) runs suites in a sandbox without some of Node's globals (fetch, AbortController,
   * performance before 27): every generated file that uses one binds it from Node's own context (jestSandbox.ts).
   */
  jestSandbox?: boolean;
  /**
   * The project's Jest (before 25.5) has no @jest/globals package: the suites use Jest's globals, typed by
   * @types/jest, instead of importing them.
   */
  jestGlobals?: boolean;
  /**
   * The project's Jest (before 24.3) has no TextEncoder or TextDecoder in its Node sandbox, and pg reads TextEncoder
   * as it loads: a jest-sandbox file puts Node's there, and every suite imports it first (jestEncoding.ts).
   */
  jestEncoding?: boolean;
  /**
   * A JavaScript project on Jest before 24: babel-jest 23 runs every file through Babel 6, which parses ES2017 plus
   * object rest/spread only. The JavaScript is lowered to that (babel6Syntax.ts).
   */
  jestBabel6?: boolean;
  /** NestJS on @nestjs/platform-fastify: the generated suite boots Nest on FastifyAdapter. Undefined = Express. */
  httpPlatform?: 'fastify';
}

/** Node 20 + TypeScript NodeNext ESM with vitest: the reference profile, and what a project without a tsconfig gets. */
export const REFERENCE_PROFILE: ProjectProfile = {
  language: 'typescript',
  moduleSystem: 'esm',
  relativeImports: 'js-extension',
  defaultImportInterop: true,
  esLibrary: 2022,
  testRunner: 'vitest',
  paths: {},
};
