import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { dropOrphanTypes, withJestGlobals } from '../../src/scaffold/profile/applyProfile.js';
import { generateScaffold, REFERENCE_PROFILE, type ProjectProfile } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';

describe('types the profile adaptations leave unused go with their last use (noUnusedLocals)', () => {
  it('a type-only import name, a whole type-only import, a local type alias; used ones and exported ones stay', () => {
    const was = `import type { ActionSettings, IdempotencyPolicy } from './types';
import type { Only } from './only';
/** What it reads. */
type Local = { a: number };
export type Kept = { b: number };
export const POLICY: IdempotencyPolicy = { x: 1 } satisfies ActionSettings & Only & Local;
`;
    const now = was.replace(' satisfies ActionSettings & Only & Local', '');
    expect(dropOrphanTypes(was, now)).toBe(`import type { IdempotencyPolicy } from './types';
export type Kept = { b: number };
export const POLICY: IdempotencyPolicy = { x: 1 };
`);
  });

  it('leaves a name alone that the original never used either (not the adaptation\'s doing)', () => {
    const code = "import type { Unused } from './types';\nexport const x = 1;\n";
    expect(dropOrphanTypes(code, `${code}// adapted\n`)).toBe(`${code}// adapted\n`);
  });

  it('TypeScript 3.8 on an old Jest: the generated files compile with noUnusedLocals and the suites import nothing from @jest/globals', async () => {
    const profile: ProjectProfile = { ...REFERENCE_PROFILE, moduleSystem: 'commonjs', relativeImports: 'extensionless', typescriptVersion: 308, testRunner: 'jest', jestSandbox: true, bareBuiltins: true, jestGlobals: true };
    const files = generateScaffold(await modelFor('express-stripe-payments'), { dir: 'src/idempotency', profile }).filter((file) => file.path.endsWith('.ts'));
    for (const file of files) expect(file.contents, file.path).not.toContain('@jest/globals');
    const settings = files.find((file) => file.path.endsWith('settings.ts'))!;
    expect(settings.contents).not.toMatch(/\bActionSettings\b/);
    // Unused-name diagnostics only (6133, 6192, 6196, 6198): the rest is oldTypings/oldToolchain's to check.
    const host = ts.createCompilerHost({});
    const sources = new Map(files.map((file) => [`/p/${file.path}`, file.contents]));
    const read = host.readFile.bind(host);
    host.readFile = (name) => sources.get(name) ?? read(name);
    const exists = host.fileExists.bind(host);
    host.fileExists = (name) => sources.has(name) || exists(name);
    const getSource = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language) => (sources.has(name) ? ts.createSourceFile(name, sources.get(name)!, language) : getSource(name, language));
    const program = ts.createProgram([...sources.keys()], { noEmit: true, noUnusedLocals: true, module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, skipLibCheck: true, types: [] }, host);
    const unused = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => [6133, 6192, 6196, 6198].includes(d.code))
      .map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(unused).toEqual([]);
  });
});

describe('Jest before 25.5 (no @jest/globals)', () => {
  it('drops the import (ES or CommonJS) and reads the global jest', () => {
    const suite = "import { afterAll, describe, expect, it, jest as jestApi } from '@jest/globals';\nimport pg from 'pg';\n\njestApi.setTimeout(60000);\n";
    expect(withJestGlobals({ path: 'a.test.ts', contents: suite, role: 'tests' } as never).contents).toBe("import pg from 'pg';\n\njest.setTimeout(60000);\n");
    const cjs = "const {\n  afterAll,\n  jest: jestApi,\n} = require('@jest/globals');\njestApi.setTimeout(60000);\n";
    expect(withJestGlobals({ path: 'a.test.js', contents: cjs, role: 'tests' } as never).contents).toBe('jest.setTimeout(60000);\n');
  });
});
