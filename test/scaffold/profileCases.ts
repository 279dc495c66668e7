import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateScaffold, readProjectProfile, type ProjectProfile, type ScaffoldFile } from '../../src/scaffold/index.js';
import type { DesignModel } from '../../src/model/types.js';
import { ROOT } from './generateInto.js';

/** A tool or package from this repository's node_modules, as the user's project would have it. */
export const bin = (relative: string) => path.join(ROOT, 'node_modules', relative);
export const TSC = bin('typescript/bin/tsc');

/** One language/module profile of a user's project, with the runner its generated suites run on. */
export interface ProfileCase {
  label: string;
  language: 'typescript' | 'javascript';
  runner: 'vitest' | 'jest' | 'node-test' | 'mocha';
  packageType: 'module' | 'commonjs';
  /** The project's tsconfig compilerOptions (TypeScript cases); outDir/rootDir/typeRoots are added. */
  compilerOptions?: Record<string, unknown>;
  /** What readProjectProfile must make of it. */
  expected: Partial<ProjectProfile>;
  /** Files the runner needs, as a user's project would have them. */
  extraFiles?: Record<string, string>;
  /** The design (fixtures/configs); default express-stripe-payments. */
  fixture?: string;
  /** Runs the generated suite; the emitted JavaScript is in dist/ for compiled cases. */
  command: (dir: string) => string[];
}

export const PROFILE_CASES: readonly ProfileCase[] = [
  {
    // A Vite/tsup-style project: ES modules, bundler resolution, extensionless relative imports.
    label: 'ts-bundler-vitest',
    language: 'typescript',
    runner: 'vitest',
    packageType: 'module',
    compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', noEmit: true },
    expected: { moduleSystem: 'esm', relativeImports: 'extensionless', defaultImportInterop: true },
    extraFiles: { 'vitest.config.mjs': "export default { test: { include: ['src/**/*.test.ts'], testTimeout: 30000, hookTimeout: 30000 } };\n" },
    command: () => [bin('vitest/vitest.mjs'), 'run', '--config', 'vitest.config.mjs', '--root', '.'],
  },
  {
    // The classic NestJS tsconfig: CommonJS without esModuleInterop, an old target, ts-jest.
    label: 'ts-cjs-no-interop-es2019-jest',
    language: 'typescript',
    runner: 'jest',
    packageType: 'commonjs',
    compilerOptions: { target: 'ES2019', module: 'commonjs', noEmit: true },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: false, esLibrary: 2019 },
    extraFiles: {
      'jest.config.cjs': `module.exports = { rootDir: __dirname, roots: ['<rootDir>/src'], testEnvironment: 'node', transform: { '^.+\\\\.ts$': [${JSON.stringify(bin('ts-jest'))}, { isolatedModules: true }] } };\n`,
    },
    command: () => [bin('jest/bin/jest.js'), '--config', 'jest.config.cjs', '--ci'],
  },
  {
    // `nest new`'s tsconfig: CommonJS, allowSyntheticDefaultImports but no esModuleInterop (pg_1.default.Pool would
    // be undefined at start), decorators; the NestJS adapter's suite under ts-jest.
    label: 'nestjs-classic-cjs-jest',
    language: 'typescript',
    runner: 'jest',
    packageType: 'commonjs',
    fixture: 'nestjs-adyen-saga',
    // Nest's defaults also switch strictNullChecks and noImplicitAny off: the generated code must compile that way too.
    compilerOptions: { target: 'ES2021', module: 'commonjs', allowSyntheticDefaultImports: true, experimentalDecorators: true, emitDecoratorMetadata: true, noEmit: true, strict: false, strictNullChecks: false, noImplicitAny: false },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: false, esLibrary: 2021 },
    extraFiles: {
      'jest.config.cjs': `module.exports = { rootDir: __dirname, roots: ['<rootDir>/src'], testEnvironment: 'node', transform: { '^.+\\.ts$': [${JSON.stringify(bin('ts-jest'))}, { isolatedModules: true }] } };\n`,
    },
    command: () => [bin('jest/bin/jest.js'), '--config', 'jest.config.cjs', '--ci'],
  },
  {
    label: 'ts-cjs-interop-es2019-mocha',
    language: 'typescript',
    runner: 'mocha',
    packageType: 'commonjs',
    compilerOptions: { target: 'ES2019', module: 'commonjs', esModuleInterop: true },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: true, esLibrary: 2019 },
    // The store contract too: written once against Vitest's API, it must run on Mocha's globals and node:assert.
    command: () => [bin('mocha/bin/mocha.js'), 'dist/idempotency/idempotency.test.js', 'dist/idempotency/store-contract.test.js'],
  },
  {
    // `module: Node16` in a CommonJS package (stripe/stripe-commercetools-connect-app@1c61c00's processor): static
    // imports may omit the extension, but `await import('./x')` keeps ES-module resolution and may not, so the
    // generated suites import statically.
    label: 'ts-node16-cjs-jest',
    language: 'typescript',
    runner: 'jest',
    packageType: 'commonjs',
    compilerOptions: { target: 'ES2022', module: 'Node16', esModuleInterop: true, isolatedModules: true, noEmit: true },
    expected: { moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: true },
    extraFiles: {
      'jest.config.cjs': `module.exports = { rootDir: __dirname, roots: ['<rootDir>/src'], testEnvironment: 'node', transform: { '^.+\\\\.ts$': [${JSON.stringify(bin('ts-jest'))}, { isolatedModules: true }] } };\n`,
    },
    command: () => [bin('jest/bin/jest.js'), '--config', 'jest.config.cjs', '--ci'],
  },
  {
    label: 'ts-nodenext-esm-node-test',
    language: 'typescript',
    runner: 'node-test',
    packageType: 'module',
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext' },
    expected: { moduleSystem: 'esm', relativeImports: 'js-extension', defaultImportInterop: true },
    // The store contract and a trigger suite (webhooks) too, from tsc's output, which has no .sql files beside them.
    command: () => ['--test', 'dist/idempotency/idempotency.test.js', 'dist/idempotency/store-contract.test.js', 'dist/idempotency/webhooks/webhooks.test.js'],
  },
  {
    label: 'js-esm-node-test',
    language: 'javascript',
    runner: 'node-test',
    packageType: 'module',
    expected: { moduleSystem: 'esm' },
    command: () => ['--test', 'src/idempotency/idempotency.test.js'],
  },
  {
    // A JavaScript CommonJS project on today's Jest with no config at all (oldJest.test.ts runs the same on Jest 26).
    label: 'js-cjs-jest',
    language: 'javascript',
    runner: 'jest',
    packageType: 'commonjs',
    expected: { moduleSystem: 'commonjs' },
    command: () => [bin('jest/bin/jest.js'), '--ci', 'src/idempotency'],
  },
  {
    label: 'js-cjs-mocha',
    language: 'javascript',
    runner: 'mocha',
    packageType: 'commonjs',
    expected: { moduleSystem: 'commonjs' },
    command: () => [bin('mocha/bin/mocha.js'), 'src/idempotency/idempotency.test.js'],
  },
];

/** The case of that label (a typo in a suite's list fails loudly instead of running nothing). */
export function profileCase(label: string): ProfileCase {
  const found = PROFILE_CASES.find((entry) => entry.label === label);
  if (!found) throw new Error(`no profile case ${label}`);
  return found;
}

export const SCAFFOLD_DIR = 'src/idempotency';

export interface ProfileProject {
  dir: string;
  profile: ProjectProfile;
  files: ScaffoldFile[];
}

async function writeProject(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), contents);
  }
}

/**
 * A project with the case's package.json and tsconfig under .tmp (so packages resolve from this repository's
 * node_modules, as from the user's), the profile readProjectProfile reads from it, and the scaffold generated for that
 * profile from `model` written into src/idempotency.
 */
export async function generateProfileProject(profileCase: ProfileCase, model: DesignModel, label = profileCase.label): Promise<ProfileProject> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `profile-${label}-`));
  const tsconfig = {
    compilerOptions: { strict: true, skipLibCheck: true, types: ['node'], typeRoots: [bin('@types')], outDir: 'dist', rootDir: 'src', ...profileCase.compilerOptions },
    include: ['src'],
  };
  await writeProject(dir, {
    'package.json': JSON.stringify({ private: true, type: profileCase.packageType }),
    ...(profileCase.language === 'typescript' ? { 'tsconfig.json': JSON.stringify(tsconfig, null, 2) } : {}),
    ...profileCase.extraFiles,
  });
  const profile = await readProjectProfile({ root: dir, dir: SCAFFOLD_DIR, language: profileCase.language, testFramework: profileCase.runner });
  const files = generateScaffold(model, { dir: SCAFFOLD_DIR, profile });
  await writeProject(dir, Object.fromEntries(files.map((file) => [file.path, file.contents])));
  return { dir, profile, files };
}
