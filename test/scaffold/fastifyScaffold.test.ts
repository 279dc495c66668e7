import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { documentExcerpts, generateScaffold } from '../../src/scaffold/index.js';
import { generateAndCompile, modelFor } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`Fastify scaffold suite against PostgreSQL skipped: ${skip}`);

/** The smallest Fastify design (one action, all defaults: 422) and a richer one: a Stripe saga, a webhook, 409 on mismatch. */
const FIXTURES = ['minimal-one-action', 'fastify-bookings-stripe'];

describe.each(FIXTURES)('Fastify + PostgreSQL scaffolding for %s', (fixture) => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('ships the shared runtime unchanged plus the Fastify adapter, and the document embeds the adapter', async () => {
    const model = await modelFor(fixture);
    const files = generateScaffold(model, { dir: 'src/idempotency' });
    const express = generateScaffold(await modelFor(fixture, (raw) => ((raw.stack as Record<string, unknown>).framework = 'express')), { dir: 'src/idempotency' });
    const byPath = new Map(express.map((file) => [file.path, file.contents]));
    for (const shared of ['types', 'core', 'fingerprint', 'keys', 'problems', 'pgStore', 'pool', 'saga', 'cleanup', 'metrics', 'settings', 'cleanup-job']) {
      const file = files.find((candidate) => candidate.path === `src/idempotency/${shared}.ts`);
      expect(file?.contents, shared).toBe(byPath.get(`src/idempotency/${shared}.ts`));
    }
    expect(files.some((file) => file.path.endsWith('/express.ts'))).toBe(false);
    const adapter = files.find((file) => file.path === 'src/idempotency/fastify.ts')!;
    expect(adapter.role).toBe('middleware');

    const excerpts = documentExcerpts(model, { dir: 'src/idempotency' });
    expect(excerpts.middleware).toEqual({ language: 'typescript', code: adapter.contents, path: 'src/idempotency/fastify.ts' });
    for (const id of ['ddl', 'fingerprint', 'cleanup', 'tests', 'monitoring'] as const) {
      expect(files.find((file) => file.path === excerpts[id]?.path)?.contents, id).toBe(excerpts[id]!.code);
    }
    expect(excerpts.tests!.code).toContain("from 'fastify'");
    expect(excerpts.tests!.code).not.toContain('express');
  });

  it('README wires Fastify in at most 15 lines of code', async () => {
    const readme = generateScaffold(await modelFor(fixture), { dir: 'x' }).find((file) => file.role === 'readme')!.contents;
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!.trimEnd().split('\n');
    expect(code.length).toBeLessThanOrEqual(15);
    expect(code[0]).toBe("import Fastify from 'fastify';");
    expect(readme).toContain('onRequest');
    expect(readme).not.toMatch(/express/i);
  });

  it('compiles with tsc --strict', async () => {
    const generated = await generateAndCompile(await modelFor(fixture), `fastify-${fixture}`);
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
  });

  it.skipIf(skip !== undefined)('passes its own generated test suite on a Fastify app against the real PostgreSQL', async () => {
    const generated = await generateAndCompile(await modelFor(fixture), `fastify-${fixture}-suite`);
    dirs.push(generated.dir);
    const stdout = await runGeneratedSuite(generated.dir);
    expect(stdout).not.toMatch(/skipped/);
  });
});
