import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { documentExcerpts, generateScaffold } from '../../src/scaffold/index.js';
import { generateAndCompile, modelFor } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

export interface AdapterCase {
  /** stack.framework in the config. */
  readonly framework: string;
  /** The adapter file the target ships beside the shared runtime. */
  readonly module: string;
  /** The first line of the README's wiring code block. */
  readonly firstImport: string;
  /** What the generated test suite imports its framework from. */
  readonly testImport: string;
}

/**
 * The scaffold checks every new adapter passes: the shared runtime byte-identical to the Express target's, the
 * adapter embedded in the document, a README wiring of at most 15 lines, tsc --strict, and the generated suite
 * passing against the real PostgreSQL.
 */
export async function describeAdapterScaffold(adapter: AdapterCase): Promise<void> {
  // The bookings design (lease mode, Stripe saga, webhook) for the structure; the minimal one (transactional mode)
  // for the generated suite, since the black-box and fault suites already drive lease mode through each adapter.
  for (const fixture of ['fastify-bookings-stripe', 'minimal-one-action']) await describeFixture(adapter, fixture, fixture === 'minimal-one-action');
}

async function describeFixture(adapter: AdapterCase, fixture: string, runSuite: boolean): Promise<void> {
  const skip = await postgresSkipReason();
  if (skip) console.warn(`${adapter.framework} scaffold suite against PostgreSQL skipped: ${skip}`);
  const patch = (raw: Record<string, unknown>) => ((raw.stack as Record<string, unknown>).framework = adapter.framework);

  describe(`${adapter.framework} + PostgreSQL scaffolding for ${fixture}`, () => {
    const dirs: string[] = [];
    afterAll(async () => {
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    });

    it('ships the shared runtime unchanged plus its adapter, and the document embeds the adapter', async () => {
      const model = await modelFor(fixture, patch);
      const files = generateScaffold(model, { dir: 'src/idempotency' });
      const express = generateScaffold(await modelFor(fixture, (raw) => ((raw.stack as Record<string, unknown>).framework = 'express')), { dir: 'src/idempotency' });
      const byPath = new Map(express.map((file) => [file.path, file.contents]));
      for (const shared of ['types', 'core', 'fingerprint', 'keys', 'problems', 'pgStore', 'pool', 'saga', 'cleanup', 'metrics', 'settings', 'cleanup-job']) {
        const file = files.find((candidate) => candidate.path === `src/idempotency/${shared}.ts`);
        expect(file?.contents, shared).toBe(byPath.get(`src/idempotency/${shared}.ts`));
      }
      expect(files.some((file) => file.path.endsWith('/express.ts'))).toBe(false);
      const file = files.find((candidate) => candidate.path === `src/idempotency/${adapter.module}.ts`)!;
      expect(file.role).toBe('middleware');
      const excerpts = documentExcerpts(model, { dir: 'src/idempotency' });
      expect(excerpts.middleware).toEqual({ language: 'typescript', code: file.contents, path: `src/idempotency/${adapter.module}.ts` });
      expect(excerpts.tests!.code).toContain(adapter.testImport);
      expect(excerpts.tests!.code).not.toContain('express');
    });

    it('README wires it in at most 15 lines of code', async () => {
      const readme = generateScaffold(await modelFor(fixture, patch), { dir: 'x' }).find((file) => file.role === 'readme')!.contents;
      const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!.trimEnd().split('\n');
      expect(code.length).toBeLessThanOrEqual(15);
      expect(code[0]).toBe(adapter.firstImport);
      expect(readme).not.toMatch(/express/i);
    });

    if (runSuite) it.skipIf(skip !== undefined)('compiles with tsc --strict and passes its own generated suite against the real PostgreSQL', async () => {
      const generated = await generateAndCompile(await modelFor(fixture, patch), `${adapter.framework}-suite`);
      dirs.push(generated.dir);
      expect(generated.tscOutput).toBe('');
      const stdout = await runGeneratedSuite(generated.dir);
      expect(stdout).not.toMatch(/skipped/);
    });
  });
}
