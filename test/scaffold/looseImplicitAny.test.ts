import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor } from './generateInto.js';

/**
 * `strict` with `noImplicitAny: false`, as boxyhq/saas-starter-kit's tsconfig has it: an unannotated `let` is then
 * `any`, not a type that follows its assignments, so a switch over it proves nothing exhaustive and a function
 * returning from each case "lacks an ending return statement" (TS2366). The adapters annotate what they switch over.
 */
describe('the adapters under strict with noImplicitAny off', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    { framework: 'nextjs', fixture: 'express-stripe-payments', options: {} },
    { framework: 'express', fixture: 'express-stripe-payments', options: {} },
    { framework: 'nestjs', fixture: 'nestjs-adyen-saga', options: { experimentalDecorators: true, emitDecoratorMetadata: true } },
  ])('$framework compiles', { timeout: 240_000 }, async ({ framework, fixture, options }) => {
    const model = await modelFor(fixture, (raw) => {
      (raw.stack as Record<string, unknown>).framework = framework;
    });
    const generated = await generateAndCompile(model, `loose-any-${framework}`, { noImplicitAny: false, noEmit: true, ...options });
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
  });
});
