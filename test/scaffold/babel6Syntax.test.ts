import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readProjectProfile } from '../../src/scaffold/index.js';
import { lowerToBabel6 } from '../../src/scaffold/profile/babel6Syntax.js';

// oldJavaScriptJest23.test.ts runs the whole scaffold under Babel 6; these are the single cases, and who gets them.
describe('JavaScript lowered to what Babel 6 parses (Jest before 24)', () => {
  it('leaves a file Babel 6 already parses exactly as it is', () => {
    const code = `'use strict';\n\nconst { a, ...rest } = require('./x.js');\n\nasync function run() {\n  return { ...rest, a: await a };\n}\n\nmodule.exports = { run };\n`;
    expect(lowerToBabel6(code, 'x.js')).toBe(code);
  });

  it.each([
    ['a numeric separator', 'const leaseMs = 30_000;\n', /30_000/],
    ['optional chaining', 'const id = (request) => request.user?.id;\n', /\?\./],
    ['nullish coalescing', "const url = process.env.DATABASE_URL ?? '';\n", /\?\?/],
    ['a class field', 'class Store {\n  rows = new Map();\n}\n', /^\s+rows =/m],
    ['catch without a binding', 'try {\n  run();\n} catch {\n  stop();\n}\n', /catch \{/],
    ['for await', 'async function read(stream) {\n  for await (const chunk of stream) use(chunk);\n}\n', /for await/],
  ])('rewrites %s, keeping comments and blank lines', (_name, statement, newer) => {
    const code = `'use strict';\n\n// Why this is here.\n${statement}\nmodule.exports = {};\n`;
    const lowered = lowerToBabel6(code, 'x.js');
    expect(lowered).not.toMatch(newer);
    expect(lowered).toContain('// Why this is here.');
    expect(lowered).toMatch(/\n\nmodule\.exports = \{\};\n$/);
  });
});

describe('who gets Babel 6 syntax', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const profileOf = async (jest: string, language: 'javascript' | 'typescript') => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ib-babel6-'));
    dirs.push(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, devDependencies: { jest } }));
    return readProjectProfile({ root: dir, dir: 'src/idempotency', language, testFramework: 'jest' });
  };

  it('a JavaScript project on Jest 23, not on Jest 24 (Babel 7), nor a TypeScript one (ts-jest compiles it)', async () => {
    expect((await profileOf('^23.6.0', 'javascript')).jestBabel6).toBe(true);
    expect((await profileOf('^24.9.0', 'javascript')).jestBabel6).toBeUndefined();
    expect((await profileOf('^23.6.0', 'typescript')).jestBabel6).toBeUndefined();
  });
});
