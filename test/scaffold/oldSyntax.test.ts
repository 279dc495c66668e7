import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type * as TypeScript from 'typescript';
import { describe, expect, it } from 'vitest';
import { generateScaffold, REFERENCE_PROFILE, type ProjectProfile, type TestRunner } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { installIntoCache } from './npmCache.js';

/**
 * TypeScript before 4.0 cannot parse `??=`, before 4.2 `abstract new (...)`, before 4.5 `{ a, type B }` and before
 * 4.9 `satisfies` (lujakob/nestjs-realworld-example-app is on 3.8.3). The profile of such a project must get files
 * its compiler parses, whatever the stack and runner. Only the parser is asked: oldTypings.test.ts type-checks.
 */
const TYPESCRIPT = '3.8.3';
const CACHE = path.join(os.tmpdir(), `idempotency-builder-typescript${TYPESCRIPT}-parser`);
const skip = await installIntoCache(CACHE, { typescript: TYPESCRIPT });
if (skip) console.warn(`TypeScript ${TYPESCRIPT} syntax suite skipped: ${skip}`);

const STACKS: Array<{ fixture: string; stack: Record<string, string> }> = [
  ...['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none'].map((framework) => ({ fixture: 'large-marketplace', stack: { framework } })),
  ...['mysql', 'sqlite', 'redis', 'dynamodb'].map((database) => ({ fixture: 'large-marketplace', stack: { database } })),
  { fixture: 'worker-cron-no-payments', stack: {} },
  { fixture: 'nestjs-adyen-saga', stack: {} },
];
const RUNNERS: TestRunner[] = ['jest', 'mocha', 'node-test', 'vitest'];

describe.skipIf(skip !== undefined)(`generated TypeScript for a project on TypeScript ${TYPESCRIPT}`, () => {
  it.each(RUNNERS)('every file of every stack parses (%s suites)', { timeout: 120_000 }, async (runner) => {
    const ts = createRequire(path.join(CACHE, 'package.json'))('typescript') as typeof TypeScript;
    expect(ts.version).toBe(TYPESCRIPT);
    const profile: ProjectProfile = { ...REFERENCE_PROFILE, moduleSystem: 'commonjs', relativeImports: 'extensionless', typescriptVersion: 308, testRunner: runner };
    const errors: string[] = [];
    for (const { fixture, stack } of STACKS) {
      const model = await modelFor(fixture, (raw) => Object.assign(raw.stack as Record<string, unknown>, stack));
      for (const file of generateScaffold(model, { dir: 'src/idempotency', profile }).filter((file) => file.path.endsWith('.ts'))) {
        const source = ts.createSourceFile(file.path, file.contents, ts.ScriptTarget.Latest, true);
        // parseDiagnostics is internal, but the only way to ask the 3.8 parser alone.
        for (const diagnostic of (source as unknown as { parseDiagnostics: Array<{ start: number; messageText: string }> }).parseDiagnostics) {
          const { line } = source.getLineAndCharacterOfPosition(diagnostic.start);
          errors.push(`${fixture} ${JSON.stringify(stack)} ${file.path}:${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
        }
      }
    }
    expect(errors).toEqual([]);
  });
});
