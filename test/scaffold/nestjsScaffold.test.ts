import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { documentExcerpts, generateScaffold } from '../../src/scaffold/index.js';
import { generateAndCompile, modelFor } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`NestJS scaffold suite against PostgreSQL skipped: ${skip}`);

/** What NestJS asks of the user's tsconfig; the generated code must compile strictly with exactly that. */
const NEST_COMPILER_OPTIONS = { experimentalDecorators: true, emitDecoratorMetadata: true };

/** The marketplace design: an Adyen saga over HTTP, an Adyen webhook with a derived key and a BullMQ consumer. */
const FIXTURE = 'nestjs-adyen-saga';

describe('NestJS + PostgreSQL scaffolding for nestjs-adyen-saga', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('ships the shared runtime unchanged plus the NestJS adapter, and the document embeds the adapter', async () => {
    const model = await modelFor(FIXTURE);
    const files = generateScaffold(model, { dir: 'src/idempotency' });
    const express = generateScaffold(await modelFor(FIXTURE, (raw) => ((raw.stack as Record<string, unknown>).framework = 'express')), { dir: 'src/idempotency' });
    const byPath = new Map(express.map((file) => [file.path, file.contents]));
    for (const shared of ['types', 'core', 'fingerprint', 'keys', 'problems', 'pgStore', 'pool', 'saga', 'cleanup', 'metrics', 'settings', 'cleanup-job', 'providers']) {
      const file = files.find((candidate) => candidate.path === `src/idempotency/${shared}.ts`);
      expect(file?.contents, shared).toBe(byPath.get(`src/idempotency/${shared}.ts`));
    }
    expect(files.some((file) => file.path.endsWith('/express.ts') || file.path.endsWith('/fastify.ts'))).toBe(false);
    const adapter = files.find((file) => file.path === 'src/idempotency/nestjs.ts')!;
    expect(adapter.role).toBe('middleware');

    const excerpts = documentExcerpts(model, { dir: 'src/idempotency' });
    expect(excerpts.middleware).toEqual({ language: 'typescript', code: adapter.contents, path: 'src/idempotency/nestjs.ts' });
    expect(excerpts.middleware!.code).toContain('implements NestInterceptor');
    expect(excerpts.tests!.code).toContain("from '@nestjs/core'");
  });

  it('README wires NestJS in at most 15 lines of code, principal from request.user', async () => {
    const readme = generateScaffold(await modelFor(FIXTURE), { dir: 'x' }).find((file) => file.role === 'readme')!.contents;
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!.trimEnd().split('\n');
    expect(code.length).toBeLessThanOrEqual(15);
    expect(code[0]).toBe("import { Module } from '@nestjs/common';");
    expect(code.join('\n')).toContain('principal: (request) => request.user?.id');
    expect(code.join('\n')).toContain('@Idempotent(ACTIONS.submitOrder)');
    expect(readme).toContain('experimentalDecorators');
    expect(readme).not.toMatch(/fastify|express\(\)/i);
  });

  it('compiles with tsc --strict --experimentalDecorators --emitDecoratorMetadata', async () => {
    const generated = await generateAndCompile(await modelFor(FIXTURE), 'nestjs', NEST_COMPILER_OPTIONS);
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
  });

  it.skipIf(skip !== undefined)('passes its own generated test suite on a NestJS app against the real PostgreSQL', async () => {
    // The fixture's own runner is jest (its suite runs under ts-jest in profiles.test.ts); this one runs under vitest.
    const model = await modelFor(FIXTURE, (raw) => ((raw.stack as Record<string, unknown>).testFramework = 'vitest'));
    const generated = await generateAndCompile(model, 'nestjs-suite', NEST_COMPILER_OPTIONS);
    dirs.push(generated.dir);
    const stdout = await runGeneratedSuite(generated.dir);
    expect(stdout).not.toMatch(/skipped/);
  });
});
