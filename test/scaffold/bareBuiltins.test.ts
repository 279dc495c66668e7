import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { loadTypeScript } from '../../src/scaffold/javascript/transpile.js';
import { missingDependencies } from '../../src/scaffold/placement/installCommands.js';
import { needsBareBuiltins, toBareBuiltins } from '../../src/scaffold/profile/bareBuiltins.js';
import { modelFor } from './generateInto.js';

// The compiler the scaffold itself uses (ts-morph's).
const ts = loadTypeScript();
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function project(files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-bare-builtins-'));
  roots.push(root);
  for (const [name, value] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), typeof value === 'string' ? value : JSON.stringify(value));
  }
  return root;
}

/** Every module specifier a file names (imports, exports, require, import(), import types), as TypeScript reads them. */
const specifiers = (code: string) => ts.preProcessFile(code, true, true).importedFiles.map((file) => file.fileName);
const CJS_TSCONFIG = { compilerOptions: { target: 'ES2019', module: 'commonjs', esModuleInterop: true } };

describe('the decision: Jest before 27', () => {
  it('reads the Jest version as major * 100 + minor; no Jest keeps node: specifiers', () => {
    expect(needsBareBuiltins(2606)).toBe(true);
    expect(needsBareBuiltins(2700)).toBe(false);
    expect(needsBareBuiltins(2907)).toBe(false);
    expect(needsBareBuiltins(undefined)).toBe(false);
  });

  it('comes from package.json (hagopj13/node-express-boilerplate: jest ^26.6.3), the installed Jest first', async () => {
    const declared = await project({ 'package.json': { devDependencies: { jest: '^26.6.3' } }, 'tsconfig.json': CJS_TSCONFIG });
    expect(await readProjectProfile({ root: declared, dir: 'src/idempotency', language: 'typescript' })).toMatchObject({ bareBuiltins: true });
    const javascript = await project({ 'package.json': { dependencies: { jest: '26.6.3' } } });
    expect(await readProjectProfile({ root: javascript, dir: 'src/idempotency', language: 'javascript' })).toMatchObject({ bareBuiltins: true });
    const current = await project({ 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'tsconfig.json': CJS_TSCONFIG });
    expect((await readProjectProfile({ root: current, dir: 'src/idempotency', language: 'typescript' })).bareBuiltins).toBeUndefined();
    // The range says ^29, but what runs the suite is the Jest in node_modules.
    const installed = await project({ 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'node_modules/jest/package.json': { version: '26.6.3' } });
    expect(await readProjectProfile({ root: installed, dir: 'src/idempotency', language: 'typescript' })).toMatchObject({ bareBuiltins: true });
  });
});

describe('toBareBuiltins', () => {
  it('rewrites every kind of module specifier and nothing else', () => {
    const code = [
      "import { randomUUID } from 'node:crypto';",
      "import type { AddressInfo } from 'node:net';",
      "import { readFile } from \"node:fs/promises\";",
      "export { setTimeout } from 'node:timers';",
      "import path = require('node:path');",
      "const os = require('node:os');",
      "const http = await import('node:http');",
      "type Server = import('node:http').Server;",
      "jest.mock('node:child_process');",
      "import { describe } from 'node:test';",
      "import pg from 'pg';",
      "const label = 'node:crypto';",
      '',
    ].join('\n');
    expect(toBareBuiltins(ts, code, 'x.ts')).toBe(
      [
        "import { randomUUID } from 'crypto';",
        "import type { AddressInfo } from 'net';",
        'import { readFile } from "fs/promises";',
        "export { setTimeout } from 'timers';",
        "import path = require('path');",
        "const os = require('os');",
        "const http = await import('http');",
        "type Server = import('http').Server;",
        "jest.mock('child_process');",
        // node:test has no bare name (`test` would be a package): left as written.
        "import { describe } from 'node:test';",
        "import pg from 'pg';",
        "const label = 'node:crypto';",
        '',
      ].join('\n'),
    );
  });

  it('reads JavaScript too', () => {
    expect(toBareBuiltins(ts, "'use strict';\nconst { createHash } = require('node:crypto');\n", 'x.cjs')).toBe("'use strict';\nconst { createHash } = require('crypto');\n");
  });
});

describe('a Jest 26 project gets a scaffold without node: specifiers', () => {
  const cases = [
    { label: 'TypeScript, CommonJS', language: 'typescript' as const, files: { 'tsconfig.json': CJS_TSCONFIG } },
    { label: 'JavaScript, CommonJS', language: 'javascript' as const, files: {} },
  ];
  it.each(cases)('$label: every source file and README example', { timeout: 120_000 }, async ({ language, files }) => {
    const root = await project({ 'package.json': { devDependencies: { jest: '^26.6.3' } }, ...files });
    const profile = await readProjectProfile({ root, dir: 'src/idempotency', language, testFramework: 'jest' });
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language, testFramework: 'jest' });
    });
    const generated = generateScaffold(model, { dir: 'src/idempotency', profile });
    const sources = generated.filter((file) => /\.[cm]?[jt]s$/.test(file.path));
    const all = sources.flatMap((file) => specifiers(file.contents));
    // The scaffold does import builtins (crypto, fs, http...): now by their bare names.
    expect(all).toEqual(expect.arrayContaining(['crypto']));
    expect(all.filter((specifier) => specifier.startsWith('node:'))).toEqual([]);
    for (const readme of generated.filter((file) => file.path.endsWith('.md'))) {
      for (const [, code] of readme.contents.matchAll(/```(?:ts|js)\n([\s\S]*?)```/g)) expect(specifiers(code!).filter((s) => s.startsWith('node:'))).toEqual([]);
    }
    // Bare builtins are not packages to install.
    const { runtime, dev } = missingDependencies(generated, new Set(), language === 'typescript');
    expect([...runtime, ...dev]).not.toContain('crypto');
    expect([...runtime, ...dev]).not.toContain('http');
  });

  it('a Jest 29 project keeps node: specifiers', { timeout: 120_000 }, async () => {
    const root = await project({ 'package.json': { devDependencies: { jest: '^29.7.0' } }, 'tsconfig.json': CJS_TSCONFIG });
    const profile = await readProjectProfile({ root, dir: 'src/idempotency', language: 'typescript', testFramework: 'jest' });
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'typescript', testFramework: 'jest' });
    });
    const all = generateScaffold(model, { dir: 'src/idempotency', profile }).flatMap((file) => (file.path.endsWith('.ts') ? specifiers(file.contents) : []));
    expect(all).toContain('node:crypto');
  });
});
