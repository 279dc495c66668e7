import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { importStyleFor } from '../../src/apply/importStyle.js';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { aliasedSpecifier, pathAliases, projectImportsAt } from '../../src/scaffold/profile/pathAliases.js';
import { modelFor, ROOT } from './generateInto.js';

const FIXTURE = path.join(ROOT, 'fixtures/profiles/next-alias');
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

const nextModel = () => modelFor('minimal-one-action', (raw) => ((raw.stack as Record<string, unknown>).framework = 'nextjs'));

describe('path aliases (a Next.js app with "@/*" → ./src/*)', () => {
  it('the profile carries the alias, relative to the project root, and how the app imports the scaffold folder', async () => {
    const profile = await readProjectProfile({ root: FIXTURE, dir: 'src/idempotency', language: 'typescript' });
    expect(profile).toMatchObject({ paths: { '@/*': ['src/*'] }, scaffoldImport: '@/idempotency', relativeImports: 'extensionless' });
    // A folder no alias covers keeps relative imports.
    expect((await readProjectProfile({ root: FIXTURE, dir: 'idempotency', language: 'typescript' })).scaffoldImport).toBeUndefined();
  });

  it('the README wires the app through "@/idempotency", which resolves under the project tsconfig; the scaffold itself stays relative', async () => {
    const profile = await readProjectProfile({ root: FIXTURE, dir: 'src/idempotency', language: 'typescript' });
    const files = generateScaffold(await nextModel(), { dir: 'src/idempotency', profile });
    const readme = files.find((file) => file.role === 'readme')!.contents;
    expect(readme).toContain("import { createIdempotency, createPool, POLICY } from '@/idempotency';");
    expect(readme).not.toContain('./idempotency/index');
    for (const file of files.filter((f) => f.path.endsWith('.ts'))) expect(file.contents).not.toMatch(/from '@\//);

    // The specifier the README prints, resolved by TypeScript from a route deep in the app, lands on the scaffold.
    const root = await mkdtemp(path.join(tmpdir(), 'idem-alias-'));
    roots.push(root);
    await cp(FIXTURE, root, { recursive: true });
    for (const file of files) {
      await mkdir(path.dirname(path.join(root, file.path)), { recursive: true });
      await writeFile(path.join(root, file.path), file.contents);
    }
    const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const from = path.join(root, 'src/app/api/checkout/route.ts');
    const resolved = ts.resolveModuleName('@/idempotency', from, config.options, ts.sys).resolvedModule?.resolvedFileName;
    expect(resolved && path.relative(root, resolved)).toBe(path.join('src', 'idempotency', 'index.ts'));
  });

  it("apply's wiring uses the alias a route already imports with (the profile's reader, passed to importStyleFor)", async () => {
    const route = 'src/app/api/checkout/route.ts';
    const text = await readFile(path.join(FIXTURE, route), 'utf8');
    const style = importStyleFor(route, text, 'src/idempotency', projectImportsAt(FIXTURE));
    expect(style.specifier('instance')).toBe('@/idempotency/instance');
  });

  it('aliases declared in an extended base (with comments) reach apply too; the most specific folder wins', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'idem-alias-'));
    roots.push(root);
    await mkdir(path.join(root, 'config'));
    await writeFile(path.join(root, 'config/base.json'), '{ "compilerOptions": { "baseUrl": "..", /* root */ "paths": { "@/*": ["src/*"], "~/lib/*": ["src/lib/*"], } } }');
    await writeFile(path.join(root, 'tsconfig.json'), '{ "extends": "./config/base.json", "compilerOptions": { "module": "NodeNext" } }');
    // NodeNext in a package without "type": "module" compiles to CommonJS, where require() needs no extension.
    expect(projectImportsAt(root)).toEqual({ aliases: [{ prefix: '~/lib/', dir: 'src/lib' }, { prefix: '@/', dir: 'src' }], defaultExtension: '' });
    await writeFile(path.join(root, 'package.json'), '{ "type": "module" }');
    expect(projectImportsAt(root).defaultExtension).toBe('.js');
    const paths = { '@/*': ['src/*'], '~/lib/*': ['src/lib/*'] };
    expect(aliasedSpecifier(paths, 'src/lib/idempotency')).toBe('~/lib/idempotency');
    expect(aliasedSpecifier(paths, 'src/idempotency')).toBe('@/idempotency');
    expect(aliasedSpecifier(paths, 'lib/idempotency')).toBeUndefined();
    // Next.js without src/: "@/*" → "./*" is the root itself.
    expect(aliasedSpecifier({ '@/*': ['*'] }, 'idempotency')).toBe('@/idempotency');
    // A key that could break out of a string or a Markdown fence is no alias.
    expect(pathAliases({ "@`'/*": ['src/*'] })).toEqual([]);
  });

  it('a "type": "module" package needs the extension: plain JavaScript (paypal-examples/docs-examples@8095379), and TypeScript unless a bundler resolves', async () => {
    const project = async (files: Record<string, string>) => {
      const root = await mkdtemp(path.join(tmpdir(), 'idem-esm-'));
      roots.push(root);
      for (const [file, text] of Object.entries(files)) await writeFile(path.join(root, file), text);
      return projectImportsAt(root).defaultExtension;
    };
    expect(await project({ 'package.json': '{ "type": "module" }' })).toBe('.js');
    expect(await project({ 'package.json': '{}' })).toBe('');
    expect(await project({ 'package.json': '{ "type": "module" }', 'tsconfig.json': '{ "compilerOptions": { "module": "ESNext", "moduleResolution": "Bundler" } }' })).toBe('');
    expect(await project({ 'package.json': '{ "type": "module" }', 'tsconfig.json': '{ "compilerOptions": { "module": "ESNext" } }' })).toBe('.js');
    // apply's import of the instance into a file with no relative import of its own to copy.
    const style = importStyleFor('server.js', 'import express from "express";\n', 'idempotency', { aliases: [], defaultExtension: '.js' });
    expect(style.specifier('instance')).toBe('./idempotency/instance.js');
  });
});
