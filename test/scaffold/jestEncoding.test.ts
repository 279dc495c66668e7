import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile, REFERENCE_PROFILE, type ProjectProfile } from '../../src/scaffold/index.js';
import { needsSandboxEncoding } from '../../src/scaffold/profile/jestSandbox.js';
import { modelFor } from './generateInto.js';

/**
 * Jest before 24.3 has no TextEncoder in its Node sandbox and pg reads one as it loads; oldTypeScriptJest23.test.ts
 * runs the suites under Jest 23. These check the decision and the shape of what is written, without installing it.
 */
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function profileWithJest(jest: string, language: 'typescript' | 'javascript'): Promise<ProjectProfile> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-jest-encoding-'));
  roots.push(root);
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ private: true, devDependencies: { jest: jest, 'ts-jest': jest } }));
  await writeFile(path.join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'es6', esModuleInterop: true } }));
  return readProjectProfile({ root, dir: 'src/idempotency', language, testFramework: 'jest' });
}

const OLD_JEST_TS: ProjectProfile = { ...REFERENCE_PROFILE, moduleSystem: 'commonjs', relativeImports: 'extensionless', typescriptVersion: 309, testRunner: 'jest', jestSandbox: true, bareBuiltins: true, jestGlobals: true };

describe('Jest before 24.3: no TextEncoder in the sandbox', () => {
  it('is read from the project Jest (24.3 added TextEncoder and TextDecoder to its Node environment)', async () => {
    expect(needsSandboxEncoding(2306)).toBe(true);
    expect(needsSandboxEncoding(2400)).toBe(true);
    expect(needsSandboxEncoding(2403)).toBe(false);
    expect(needsSandboxEncoding(undefined)).toBe(false);
    expect(await profileWithJest('^23.6.0', 'typescript')).toMatchObject({ jestEncoding: true });
    expect((await profileWithJest('^24.9.0', 'typescript')).jestEncoding).toBeUndefined();
    expect((await profileWithJest('^26.6.3', 'javascript')).jestEncoding).toBeUndefined();
  });

  it('TypeScript: jest-sandbox.ts at the scaffold root, the first import of every suite, listed in the README', async () => {
    const files = generateScaffold(await modelFor('express-stripe-payments'), { dir: 'src/idempotency', profile: { ...OLD_JEST_TS, jestEncoding: true } });
    const helper = files.find((file) => file.path === 'src/idempotency/jest-sandbox.ts');
    expect(helper?.contents).toContain("import { TextDecoder, TextEncoder } from 'util';");
    expect(helper?.contents).toContain('if (sandbox.TextEncoder === undefined) sandbox.TextEncoder = TextEncoder;');
    const suites = files.filter((file) => file.path.endsWith('.test.ts'));
    expect(suites.length).toBeGreaterThan(1);
    for (const suite of suites) {
      const specifier = path.posix.relative(path.posix.dirname(suite.path), 'src/idempotency/jest-sandbox');
      expect(/^import .*$/m.exec(suite.contents)?.[0], suite.path).toBe(`import '${specifier.startsWith('.') ? specifier : `./${specifier}`}';`);
      // The environment docblock stays the file's first comment, where Jest reads it.
      expect(suite.contents, suite.path).toMatch(/^\/\*\*\n \* @jest-environment node\n \*\//);
    }
    const readme = files.find((file) => file.path === 'src/idempotency/README.md')!.contents;
    expect(readme).toMatch(/- `idempotency\.test\.ts`: .*\n- `identify\.ts`: .*\n- `index\.ts`: .*\n- `jest-sandbox\.ts`: puts TextEncoder and TextDecoder in the Jest sandbox .*\n- `keys\.ts`/);
  });

  it('JavaScript (CommonJS): jest-sandbox.js required first, after the suite\'s directive', async () => {
    const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { language: 'javascript', testFramework: 'jest' }));
    const profile: ProjectProfile = { ...REFERENCE_PROFILE, language: 'javascript', moduleSystem: 'commonjs', relativeImports: 'js-extension', testRunner: 'jest', jestSandbox: true, bareBuiltins: true, jestGlobals: true, jestEncoding: true };
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    expect(files.find((file) => file.path === 'src/idempotency/jest-sandbox.js')?.contents).toMatch(/^'use strict';\n\nconst \{ TextDecoder, TextEncoder \} = require\('util'\);$/m);
    const suite = files.find((file) => file.path === 'src/idempotency/webhooks/webhooks.test.js')!;
    expect(suite.contents).toMatch(/^'use strict';\n\nrequire\('\.\.\/jest-sandbox\.js'\);\nconst \{ createHmac, randomBytes \} = require\('crypto'\);$/m);
  });

  it('Jest 24.3 and later: no such file, the suites as before', async () => {
    const model = await modelFor('express-stripe-payments');
    const files = generateScaffold(model, { dir: 'src/idempotency', profile: OLD_JEST_TS });
    expect(files.map((file) => file.path).filter((name) => name.includes('jest-sandbox'))).toEqual([]);
    expect(files.some((file) => file.contents.includes('jest-sandbox'))).toBe(false);
  });
});
