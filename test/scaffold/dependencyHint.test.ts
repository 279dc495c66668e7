import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, scaffoldProject } from '../../src/scaffold/index.js';
import { missingDependencies } from '../../src/scaffold/placement/installCommands.js';
import { modelFor, ROOT } from './generateInto.js';

const run = promisify(execFile);

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'idem-dephint-'));
  roots.push(root);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), contents);
  }
  return root;
}

/** The `npm i -D …` part of the hint for the Express + PostgreSQL scaffold in a project with this package.json. */
async function devHint(manifest: Record<string, unknown>, extra: Record<string, string> = {}): Promise<string[]> {
  const root = await project({ 'package.json': JSON.stringify({ name: 'shop-api', ...manifest }), ...extra });
  const { notes } = await scaffoldProject({ root, model: await modelFor('express-stripe-payments'), dir: 'src/idempotency', packageManager: 'npm' });
  return /npm i -D ([^&]+)$/.exec(notes.join('\n'))?.[1]?.trim().split(' ') ?? [];
}

describe('vitest in the dependency hint is a line the generated suites were run with', () => {
  it('Node 20+ without an old vite: vitest 4.1 (the newest release needs Node 22.12)', async () => {
    expect(await devHint({ type: 'module' })).toContain('vitest@^4.1.12');
    expect(await devHint({ engines: { node: '>=20.19' }, devDependencies: { vite: '^7.1.0' } })).toContain('vitest@^4.1.12');
  });

  it('a project that still supports Node 18, or declares vite 5, gets vitest 3.2 (vitest 4 needs Node 20 and vite 6+)', async () => {
    expect(await devHint({ engines: { node: '^18.18.0 || >=20' } })).toContain('vitest@^3.2.4');
    expect(await devHint({}, { '.nvmrc': 'v18.20.4\n' })).toContain('vitest@^3.2.4');
    expect(await devHint({}, { '.node-version': '18' })).toContain('vitest@^3.2.4');
    expect(await devHint({ devDependencies: { vite: '^5.4.10' } })).toContain('vitest@^3.2.4');
    // An alias names no version: the current line.
    expect(await devHint({}, { '.nvmrc': 'lts/*\n' })).toContain('vitest@^4.1.12');
  });

  it('a project that declares vitest is not told to add it', async () => {
    const dev = await devHint({ devDependencies: { vitest: '^2.1.0' } });
    expect(dev.filter((entry) => entry.startsWith('vitest'))).toEqual([]);
  });
});

/**
 * Bare package names the generated TypeScript imports, as the user's package manager sees them: with `values`, only
 * those loaded at run time (not `import type`), else every one.
 */
function imported(code: string, values = false): string[] {
  const lines = values ? code.replace(/^import\s+type\s[^;]*;/gm, '') : code;
  return [...lines.matchAll(/(?:from\s+|import\s+|require\(\s*|import\(\s*)['"]([^'"./][^'"]*)['"]/g)]
    .map((match) => match[1]!)
    .filter((specifier) => !isBuiltin(specifier))
    .map((specifier) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!));
}

describe('the hint lists every package the generated code needs, and nothing it does not use', () => {
  // Each store once and each framework once; TypeScript, so the @types of untyped packages count too.
  const cases = [
    ['postgres', 'express'],
    ['mysql', 'fastify'],
    ['sqlite', 'koa'],
    ['redis', 'hono'],
    ['dynamodb', 'nestjs'],
    ['sqlite', 'nextjs'],
    ['postgres', 'none'],
  ] as const;
  // Ship no types of their own (checked against their published packages).
  const untyped = new Set(['pg', 'express', 'better-sqlite3', 'koa']);

  it.each(cases)('%s + %s', async (database, framework) => {
    const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { database, framework, language: 'typescript', testFramework: 'vitest' }));
    const files = generateScaffold(model, { dir: 'src/idempotency' }).filter((file) => /\.ts$/.test(file.path));
    const { runtime, dev } = missingDependencies(files, new Set(), true);
    const hinted = [...runtime, ...dev];
    const used = new Set(files.flatMap((file) => imported(file.contents)));
    const loaded = new Set(files.flatMap((file) => imported(file.contents, true)));
    // A package imported only for its types needs no install when @types has them (express in the NestJS suite).
    for (const name of used) if (loaded.has(name) || !untyped.has(name)) expect(hinted, `${name} is imported`).toContain(name);
    for (const name of untyped) if (used.has(name)) expect(dev, `${name} has no types of its own`).toContain(`@types/${name}`);
    // NestFactory.create() with no adapter requires the Express platform at run time, named by no import.
    const loadedAtRunTime = new Set(framework === 'nestjs' ? ['@nestjs/platform-express'] : []);
    for (const name of hinted) {
      const target = name.startsWith('@types/') ? name.slice('@types/'.length) : name;
      expect(used.has(target) || loadedAtRunTime.has(name) || target === 'node', `${name} is printed but nothing needs it`).toBe(true);
    }
    for (const name of loadedAtRunTime) expect(hinted).toContain(name);
  });
});

describe('a project on an old TypeScript is told releases its compiler can parse', () => {
  /** The whole hint for the NestJS + MySQL scaffold (the #15 trial's stack) in a project with this package.json. */
  async function nestHint(manifest: Record<string, unknown>, extra: Record<string, string> = {}): Promise<string> {
    const root = await project({ 'package.json': JSON.stringify({ name: 'realworld-api', ...manifest }), ...extra });
    const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework: 'nestjs', database: 'mysql', language: 'typescript', testFramework: 'jest' }));
    const { notes } = await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' });
    return notes.join('\n');
  }

  it('TypeScript 3.8 (declared) or 3.9 (installed): prom-client 14.2, mysql2 2.3, @types/express 4.17.13 with its core types pinned', async () => {
    const declared = await nestHint({ dependencies: { '@nestjs/common': '^7.0.5', typescript: '^3.8.3' }, devDependencies: { jest: '^25.5.3' } });
    expect(declared).toMatch(/npm i [^&]*\bprom-client@14\.2\b/);
    expect(declared).toMatch(/npm i [^&]*\bmysql2@2\.3\b/);
    expect(declared).toContain('@types/express@4.17.13');
    expect(declared).toContain('@types/express-serve-static-core@4.17.28');
    // Jest 25 (bare builtins): @types/node 14, whose NodeJS.Global that Jest's typings still name.
    expect(declared).toContain('@types/node@14.18');
    // The installed compiler wins over a range that today would resolve to TypeScript 5.
    const installed = await nestHint({ devDependencies: { typescript: '*' } }, { 'node_modules/typescript/package.json': JSON.stringify({ name: 'typescript', version: '3.9.10' }) });
    expect(installed).toMatch(/\bprom-client@14\.2\b/);
  });

  it('TypeScript 3.9 with the Redis store: ioredis 5 typings need TypeScript 4.0, and no ioredis 4 pin is offered (its typings lack callBuffer)', async () => {
    const redisHint = async (manifest: Record<string, unknown>) => {
      const root = await project({ 'package.json': JSON.stringify({ name: 'sessions-api', ...manifest }) });
      const model = await modelFor('express-stripe-payments', (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework: 'express', database: 'redis', language: 'typescript', testFramework: 'jest' }));
      return (await scaffoldProject({ root, model, dir: 'src/idempotency', packageManager: 'npm' })).notes;
    };
    // Said even when ioredis is declared already: no install fixes the compiler.
    const old = await redisHint({ dependencies: { ioredis: '^5.3.2', express: '^4.17.1' }, devDependencies: { typescript: '~3.9.7', jest: '^26.6.3' } });
    const caveat = old.find((note) => note.startsWith('This project compiles with TypeScript 3.9'));
    expect(caveat).toContain("ioredis 5's typings need TypeScript 4.0 or later");
    expect(caveat).toContain('lack callBuffer');
    expect(old.join('\n')).not.toMatch(/ioredis@4|@types\/ioredis@/);
    // The claim itself: TypeScript 3.9 (the typescript39 alias) cannot parse ioredis 5's typings.
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'ioredis-ts39-'));
    roots.push(dir);
    await writeFile(path.join(dir, 'pool.ts'), "import * as IORedis from 'ioredis';\nexport const client = new IORedis.default();\n");
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', esModuleInterop: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['pool.ts'] }));
    const tsc39 = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript39/bin/tsc'), '-p', dir]).then(
      (result) => result.stdout,
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    expect(tsc39).toMatch(/node_modules\/ioredis\/built\/[\w/]+\.d\.ts\(\d+,\d+\): error TS1005/);
    // TypeScript 4.2 (the old-typings suite's compiler) reads them: nothing to say.
    const newer = await redisHint({ dependencies: { ioredis: '^5.3.2' }, devDependencies: { typescript: '~4.2.4' } });
    expect(newer.join('\n')).not.toContain('This project compiles with TypeScript');
  });

  it('TypeScript before 5 adding @types/pg: pg-protocol 1.14 beside it (from 1.15 its typings need a generic Buffer, today\'s @types/node only)', async () => {
    // w3tecch/express-typescript-boilerplate's manifest after the upgrade to TypeScript 3.9; oldTypeScriptJest23.test.ts compiles against it.
    const dev = await devHint({ dependencies: { express: '^4.16.4' }, devDependencies: { typescript: '3.9.10', jest: '23.6.0', '@types/node': '^14.18.63' } });
    expect(dev).toEqual(expect.arrayContaining(['@types/pg', 'pg-protocol@1.14']));
    // Declared @types/pg: the hint adds nothing for it; TypeScript 5: no pin.
    expect(await devHint({ devDependencies: { typescript: '~4.2.4', '@types/pg': '^8.6.6' } })).not.toContain('pg-protocol@1.14');
    expect((await devHint({ devDependencies: { typescript: '^5.4.0' } })).filter((entry) => entry.startsWith('pg-protocol'))).toEqual([]);
  });

  it('TypeScript 5: the newest releases, unpinned', async () => {
    const hint = await nestHint({ devDependencies: { typescript: '^5.4.0' } });
    expect(hint).toMatch(/npm i [^&]*\bprom-client\b(?!@)/);
    expect(hint).not.toContain('@types/express-serve-static-core');
  });
});

describe('a project on TypeScript before 3.8', () => {
  it('is told its compiler cannot parse the scaffolding, and the command that upgrades it', async () => {
    const root = await project({ 'package.json': JSON.stringify({ name: 'old-api', devDependencies: { typescript: '^3.6.3' } }), 'yarn.lock': '' });
    const { notes } = await scaffoldProject({ root, model: await modelFor('express-stripe-payments'), dir: 'src/idempotency', packageManager: 'yarn' });
    expect(notes).toContain('This project compiles with TypeScript 3.6, which cannot parse the scaffolding in src/idempotency (it uses `import type`, `?.` and `??`, TypeScript 3.8 and later). Upgrade TypeScript before compiling it: yarn add -D typescript@3.9');
  });

  it('3.8 and later: no such note', async () => {
    const root = await project({ 'package.json': JSON.stringify({ name: 'api', devDependencies: { typescript: '~3.8.3' } }) });
    const { notes } = await scaffoldProject({ root, model: await modelFor('express-stripe-payments'), dir: 'src/idempotency', packageManager: 'npm' });
    expect(notes.join('\n')).not.toContain('cannot parse the scaffolding');
  });
});
