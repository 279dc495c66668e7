import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readProjectProfile } from '../../src/scaffold/index.js';
import { adaptSource } from '../../src/scaffold/profile/applyProfile.js';
import { REFERENCE_PROFILE } from '../../src/scaffold/profile/types.js';

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
