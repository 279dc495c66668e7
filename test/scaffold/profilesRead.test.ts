import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { documentExcerpts, generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { adaptSource } from '../../src/scaffold/profile/applyProfile.js';
import { REFERENCE_PROFILE } from '../../src/scaffold/profile/types.js';
import { modelFor } from './generateInto.js';

const run = promisify(execFile);
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function project(files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-profile-'));
  roots.push(root);
  for (const [name, value] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), typeof value === 'string' ? value : JSON.stringify(value));
  }
  return root;
}

const read = (root: string, dir = 'src/idempotency', testFramework = 'unknown') => readProjectProfile({ root, dir, language: 'typescript', testFramework });

describe('readProjectProfile', () => {
  it('follows an extends chain, including an @tsconfig/node20 base that is not installed yet', async () => {
    const root = await project({ 'package.json': { type: 'module' }, 'tsconfig.base.json': { extends: '@tsconfig/node20/tsconfig.json', compilerOptions: { strict: true } }, 'tsconfig.json': { extends: './tsconfig.base.json' } });
    expect(await read(root)).toMatchObject({ moduleSystem: 'esm', relativeImports: 'js-extension', defaultImportInterop: true, esLibrary: 2022, tsconfig: 'tsconfig.json' });
  });

  it('a project testing with tap gets node:test suites its tap script runs', async () => {
    const root = await project({ 'package.json': { scripts: { test: 'tap --node-arg=--require=ts-node/register' }, dependencies: { tap: '^16.0.0' } }, 'tsconfig.json': { compilerOptions: { module: 'commonjs', strict: true } } });
    expect(await read(root)).toMatchObject({ testRunner: 'node-test', tapHarness: true });
    // tap declared but not what `npm test` runs: nothing is assumed.
    const other = await project({ 'package.json': { scripts: { test: 'echo none' }, devDependencies: { tap: '^16.0.0' } }, 'tsconfig.json': { compilerOptions: { module: 'commonjs' } } });
    expect(await read(other)).not.toHaveProperty('tapHarness');
  });

  it("reads a base from the workspace's own package before install (create-t3-turbo's @acme/tsconfig)", async () => {
    // The shape of t3-oss/create-t3-turbo@e69b585: packages/api extends @acme/tsconfig, which is tooling/typescript.
    const root = await project({
      'package.json': { name: 'root', private: true },
      'pnpm-workspace.yaml': 'packages:\n  - packages/*\n  - tooling/*\n',
      'tooling/typescript/package.json': { name: '@acme/tsconfig' },
      'tooling/typescript/base.json': { compilerOptions: { module: 'Preserve', moduleResolution: 'Bundler', target: 'ES2022', strict: true } },
      'tooling/typescript/compiled-package.json': { extends: './base.json', compilerOptions: { declaration: true } },
      'packages/api/package.json': { name: '@acme/api', type: 'module' },
      'packages/api/tsconfig.json': { extends: '@acme/tsconfig/compiled-package.json', include: ['src'] },
    });
    const profile = await read(root, 'packages/api/src/idempotency');
    expect(profile.unreadExtends).toBeUndefined();
    expect(profile).toMatchObject({ moduleSystem: 'esm', relativeImports: 'extensionless', esLibrary: 2022, tsconfig: 'packages/api/tsconfig.json' });
  });

  it('names a package base it cannot read (before npm install), which generate then reports', async () => {
    // An ES-module package: the unread base is taken for NodeNext, not TypeScript's CommonJS default.
    const root = await project({ 'package.json': { type: 'module' }, 'tsconfig.json': { extends: '@acme/tsconfig-base', compilerOptions: { outDir: 'dist' } } });
    expect(await read(root)).toMatchObject({ unreadExtends: ['@acme/tsconfig-base'], moduleSystem: 'esm', relativeImports: 'js-extension' });
    const commonjs = await project({ 'package.json': {}, 'tsconfig.json': { extends: '@acme/tsconfig-base' } });
    expect(await read(commonjs)).toMatchObject({ unreadExtends: ['@acme/tsconfig-base'], moduleSystem: 'commonjs' });
    // Well-known bases are read from what they say (fastify/demo@1f50cc1 extends fastify-tsconfig).
    for (const base of ['@tsconfig/node20/tsconfig.json', 'fastify-tsconfig', '@tsconfig/node-lts']) {
      const known = await project({ 'package.json': { type: 'module' }, 'tsconfig.json': { extends: base } });
      const profile = await read(known);
      expect(profile.unreadExtends).toBeUndefined();
      expect(profile).toMatchObject({ moduleSystem: 'esm', relativeImports: 'js-extension', defaultImportInterop: true });
    }
  });

  it('NodeNext in a package without "type": CommonJS output', async () => {
    const root = await project({ 'package.json': {}, 'tsconfig.json': { compilerOptions: { module: 'NodeNext' } } });
    expect(await read(root)).toMatchObject({ moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: true });
  });

  it('a solution-style tsconfig (files: [] + references) reads the app config, not the spec one', async () => {
    const root = await project({
      'package.json': {},
      'tsconfig.json': { files: [], references: [{ path: './tsconfig.spec.json' }, { path: './tsconfig.app.json' }], compilerOptions: { module: 'esnext', esModuleInterop: true } },
      'tsconfig.app.json': { extends: './tsconfig.json', compilerOptions: { module: 'commonjs' } },
      'tsconfig.spec.json': { extends: './tsconfig.json', compilerOptions: { module: 'esnext' } },
    });
    expect(await read(root)).toMatchObject({ moduleSystem: 'commonjs', defaultImportInterop: true, tsconfig: 'tsconfig.app.json' });
  });

  it('the nearest tsconfig and package.json above the scaffold folder decide (a monorepo package)', async () => {
    const root = await project({
      'package.json': { type: 'module', devDependencies: { vitest: '3' } },
      'tsconfig.json': { compilerOptions: { module: 'NodeNext' } },
      'apps/api/package.json': { devDependencies: { jest: '29', 'ts-jest': '29' } },
      'apps/api/tsconfig.json': { compilerOptions: { module: 'commonjs', target: 'ES2019' } },
    });
    expect(await read(root, 'apps/api/src/idempotency')).toMatchObject({ moduleSystem: 'commonjs', defaultImportInterop: false, esLibrary: 2019, testRunner: 'jest', tsconfig: 'apps/api/tsconfig.json' });
  });

  it('the configured test framework wins over package.json; an unknown one falls back to it', async () => {
    const root = await project({ 'package.json': { scripts: { test: 'node --test dist' } } });
    expect((await read(root)).testRunner).toBe('node-test');
    expect((await read(root, 'src/idempotency', 'mocha')).testRunner).toBe('mocha');
  });
});

describe('a NestJS project whose Jest collects only *.spec.ts', () => {
  const nestJest = { moduleFileExtensions: ['js', 'json', 'ts'], rootDir: 'src', testRegex: '.*\\.spec\\.ts$', transform: { '^.+\\.(t|j)s$': 'ts-jest' } };

  it('names the generated suites *.spec.ts (jest would skip *.test.ts), README and document excerpt included', async () => {
    const root = await project({ 'package.json': { devDependencies: { jest: '29.7.0' }, jest: nestJest }, 'tsconfig.json': { compilerOptions: { module: 'commonjs', target: 'ES2021' } } });
    const profile = await read(root);
    expect(profile).toMatchObject({ testRunner: 'jest', testFileSuffix: 'spec' });
    const model = await modelFor('nestjs-adyen-saga');
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    const suites = files.filter((file) => file.role === 'tests').map((file) => file.path);
    expect(suites).toContain('src/idempotency/idempotency.spec.ts');
    expect(suites.filter((name) => name.endsWith('.test.ts'))).toEqual([]);
    expect(files.find((file) => file.path === 'src/idempotency/README.md')!.contents).not.toMatch(/\.test\.ts\b/);
    expect(documentExcerpts(model, { dir: 'src/idempotency', profile }).tests?.path).toBe('src/idempotency/idempotency.spec.ts');
  });

  it('keeps *.test.ts where Jest collects it (default config, testMatch with .test., another runner)', async () => {
    for (const pkg of [{ devDependencies: { jest: '29.7.0' } }, { devDependencies: { jest: '29.7.0' }, jest: { testMatch: ['**/*.test.ts', '**/*.spec.ts'] } }, { devDependencies: { vitest: '3.0.0' }, jest: nestJest }]) {
      const root = await project({ 'package.json': pkg, 'tsconfig.json': { compilerOptions: { module: 'commonjs' } } });
      expect((await read(root)).testFileSuffix).toBeUndefined();
    }
  });
});

describe('JavaScript CommonJS suites for Jest', () => {
  it("never bind `jest` at module level: Jest 26 wraps CommonJS modules in a function with a `jest` parameter", async () => {
    const model = await modelFor('express-js-orders');
    const profile = { ...REFERENCE_PROFILE, language: 'javascript' as const, moduleSystem: 'commonjs' as const, testRunner: 'jest' as const };
    const suites = generateScaffold(model, { dir: 'src/idempotency', profile }).filter((file) => file.role === 'tests');
    expect(suites.length).toBeGreaterThan(0);
    for (const suite of suites) {
      expect(suite.contents, suite.path).toContain("jest: jestApi } = require('@jest/globals');");
      expect(suite.contents, suite.path).not.toMatch(/^(const|let|var)\s*\{[^}]*\bjest\b(?!:)[^}]*\}\s*=/m);
    }
  });
});

describe('adaptSource', () => {
  const code = "import pg from 'pg';\nimport Fastify, { type FastifyInstance } from 'fastify';\nimport { core } from './core.js';\nexport { x } from './x.js';\nconst m = await import('./m.js');\n";
  it('CommonJS without interop: import = require, named imports kept apart, extensionless specifiers', () => {
    expect(adaptSource(code, { ...REFERENCE_PROFILE, moduleSystem: 'commonjs', defaultImportInterop: false, relativeImports: 'extensionless' })).toBe(
      "import pg = require('pg');\nimport Fastify = require('fastify');\nimport { type FastifyInstance } from 'fastify';\nimport { core } from './core';\nexport { x } from './x';\nconst m = await import('./m');\n",
    );
  });
  it('TypeScript 3.9 (a 2021 NestJS app): inline type specifiers split out, satisfies dropped', () => {
    const old = { ...REFERENCE_PROFILE, moduleSystem: 'commonjs' as const, defaultImportInterop: false, relativeImports: 'extensionless' as const, typescriptVersion: 309 };
    expect(adaptSource("import Fastify, { type FastifyInstance } from 'fastify';\nimport { a, type B } from './b.js';\nexport const X = { a: 1 } as const satisfies Record<string, number>;\n", old)).toBe(
      "import type { FastifyInstance } from 'fastify';\nimport Fastify = require('fastify');\nimport type { B } from './b';\nimport { a } from './b';\nexport const X = { a: 1 } as const;\n",
    );
  });

  it('the reference profile changes nothing', () => {
    expect(adaptSource(code, REFERENCE_PROFILE)).toBe(code);
  });
  it('import.meta in CommonJS output is a bug, never written', () => {
    expect(() => adaptSource('const here = import.meta.url;\n', { ...REFERENCE_PROFILE, moduleSystem: 'commonjs' }, 'x.ts')).toThrow(/bug: generated x\.ts:1 uses import\.meta/);
  });
});

describe('readProjectProfile reads tsconfig as JSONC, without TypeScript', () => {
  it('comments, trailing commas and an extends array whose later entry wins', async () => {
    const root = await project({
      'package.json': { type: 'module' },
      'tsconfig.cjs.json': '{ "compilerOptions": { "module": "commonjs", "esModuleInterop": false, } }',
      'tsconfig.esm.json': '{ "compilerOptions": { /* Node ESM */ "module": "NodeNext", "target": "ES2021", }, }',
      'tsconfig.json': '// the app\n{\n  "extends": ["./tsconfig.cjs", "./tsconfig.esm.json"],\n  "compilerOptions": {\n    "lib": ["ES2023", "DOM",], // newest lib decides\n    "outDir": "dist/*not a comment*/",\n  },\n}\n',
    });
    // esModuleInterop: false survives from the first entry (the second does not set it), as in TypeScript.
    expect(await read(root)).toMatchObject({ moduleSystem: 'esm', relativeImports: 'js-extension', defaultImportInterop: false, esLibrary: 2023, tsconfig: 'tsconfig.json' });
  });

  it('a package base installed in node_modules is read from there (it wins over the built-in table), with its "tsconfig" entry', async () => {
    const root = await project({
      'package.json': {},
      'node_modules/@tsconfig/node20/package.json': { name: '@tsconfig/node20' },
      // Edited on purpose: the built-in table says Node16; the installed file must be the one read.
      'node_modules/@tsconfig/node20/tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "target": "es2019", }, }',
      'node_modules/house-config/package.json': { name: 'house-config', tsconfig: 'base.json' },
      'node_modules/house-config/base.json': { compilerOptions: { esModuleInterop: true } },
      'tsconfig.json': { extends: ['@tsconfig/node20/tsconfig.json', 'house-config'] },
    });
    expect(await read(root)).toMatchObject({ moduleSystem: 'commonjs', relativeImports: 'extensionless', defaultImportInterop: true, esLibrary: 2019 });
  });

  it('never follows a symlink out of the project: a linked base outside the root reads as absent', async () => {
    const outside = await project({ 'base.json': { compilerOptions: { module: 'commonjs', target: 'es5' } } });
    const root = await project({ 'package.json': { type: 'module' }, 'tsconfig.json': { extends: './linked/base.json', compilerOptions: { target: 'ES2022', module: 'NodeNext' } } });
    await symlink(outside, path.join(root, 'linked'));
    expect(await read(root)).toMatchObject({ moduleSystem: 'esm', esLibrary: 2022 });
    const swapped = await project({ 'package.json': {} });
    await symlink(path.join(outside, 'base.json'), path.join(swapped, 'tsconfig.json'));
    // A tsconfig.json that is itself a link out of the project is not read: TypeScript's defaults (CommonJS, ES5).
    expect(await read(swapped)).toMatchObject({ tsconfig: 'tsconfig.json', moduleSystem: 'commonjs', esLibrary: 5 });
  });

  it('paths come back relative to the project root, whichever config in the chain declared them', async () => {
    const root = await project({
      'package.json': {},
      'configs/base.json': { compilerOptions: { paths: { '~/lib/*': ['../src/lib/*'] } } },
      'apps/web/tsconfig.json': { extends: '../../configs/base.json', compilerOptions: { baseUrl: '.', paths: { '@/*': ['./src/*'] } } },
    });
    expect((await read(root, 'apps/web/src/idempotency')).paths).toEqual({ '@/*': ['apps/web/src/*'] });
    const inherited = await project({ 'package.json': {}, 'configs/base.json': { compilerOptions: { paths: { '~/lib/*': ['../src/lib/*'] } } }, 'tsconfig.json': { extends: './configs/base.json' } });
    expect((await read(inherited)).paths).toEqual({ '~/lib/*': ['src/lib/*'] });
  });

  it('loads neither typescript nor ts-morph: the module graph in a child process', async () => {
    const ts = (await import('typescript')).default;
    const out = await mkdtemp(path.join(tmpdir(), 'idem-profile-graph-'));
    roots.push(out);
    // Transpile the profile reader and everything it imports (relative imports only; a bare one fails the test).
    const source = path.resolve('src/scaffold/profile');
    const queue = [path.join(source, 'readProjectProfile.ts')];
    const bare = new Set<string>();
    for (const seen = new Set<string>(); queue.length > 0; ) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const text = await readFile(file, 'utf8');
      for (const [, type, spec] of text.matchAll(/^(?:import|export)(\s+type)?[^'"]*?from\s+'([^']+)'/gm)) {
        if (spec!.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec!.replace(/\.js$/, '.ts')));
        else if (!type && !spec!.startsWith('node:')) bare.add(spec!);
      }
      const js = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      const target = path.join(out, path.relative(path.resolve('src'), file).replace(/\.ts$/, '.js'));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, js);
    }
    expect([...bare]).toEqual([]);
    const root = await project({ 'package.json': { type: 'module' }, 'tsconfig.json': '{ "extends": "@tsconfig/node20", // not installed\n "compilerOptions": { "paths": { "@/*": ["./src/*"] } } }' });
    await writeFile(path.join(out, 'package.json'), '{ "type": "module" }');
    const script = [
      "import { createRequire } from 'node:module';",
      "import { readProjectProfile } from './scaffold/profile/readProjectProfile.js';",
      `const profile = await readProjectProfile({ root: ${JSON.stringify(root)}, dir: 'src/idempotency', language: 'typescript' });`,
      "const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\\\/](typescript|ts-morph)[\\\\/]/.test(file));",
      'console.log(JSON.stringify({ profile, loaded }));',
    ].join('\n');
    await writeFile(path.join(out, 'probe.mjs'), script);
    // NODE_PATH lets a stray bare import resolve here, so the test sees it loaded rather than failing to resolve.
    const { stdout } = await run(process.execPath, [path.join(out, 'probe.mjs')], { env: { ...process.env, NODE_PATH: path.resolve('node_modules') } });
    const result = JSON.parse(stdout) as { profile: { moduleSystem: string; paths: unknown }; loaded: string[] };
    expect(result.loaded).toEqual([]);
    expect(result.profile).toMatchObject({ moduleSystem: 'esm', paths: { '@/*': ['src/*'] } });
  });
});
