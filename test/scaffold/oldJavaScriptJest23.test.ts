import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { formatFiles } from '../../src/emit/format.js';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { installIntoCache } from './npmCache.js';

const run = promisify(execFile);

/**
 * A 2018 JavaScript project (CommonJS, no Babel config of its own) on Jest 23: Jest's default transform is
 * babel-jest 23 with Babel 6, whose parser stops at ES2017 plus object rest/spread, so `30_000`, `a?.b`, `a ?? b`,
 * class fields or `catch {` anywhere in the scaffold fail every suite that loads the file. The generated files,
 * formatted as generate formats them, must parse under that Babel and the suites pass against PostgreSQL. The
 * toolchain is installed once into a scratch folder (this repository's node_modules hold today's); the project
 * lives under it so that it resolves there.
 */
const JEST = '23.6.0';
const PACKAGES = { jest: JEST, 'babel-jest': JEST, pg: '8.23.1', express: '4.21.2', 'prom-client': '14.2.0' };
const CACHE = path.join(os.tmpdir(), `idempotency-builder-javascript-jest${JEST}`);

const install = await installIntoCache(CACHE, PACKAGES);
if (install) console.warn(`JavaScript + Jest ${JEST} suite skipped: ${install}`);
const postgres = install ?? (await postgresSkipReason());
if (postgres && !install) console.warn(`JavaScript + Jest ${JEST} suite: the run against PostgreSQL is skipped: ${postgres}`);

describe(`a JavaScript CommonJS project of 2018 on Jest ${JEST} (babel-jest 23, Babel 6)`, () => {
  let dir = '';
  let suites: string[] = [];
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(install !== undefined)('every generated file parses with the Babel 6 babel-jest runs', { timeout: 120_000 }, async () => {
    await mkdir(path.join(CACHE, 'projects'), { recursive: true });
    dir = await mkdtemp(path.join(CACHE, 'projects', 'express-js-jest23-'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, scripts: { test: 'jest' }, dependencies: { express: '^4.16.4' }, devDependencies: { jest: `^${JEST}` } }));
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'javascript' });
    expect(profile).toMatchObject({ language: 'javascript', moduleSystem: 'commonjs', testRunner: 'jest', bareBuiltins: true, jestGlobals: true, jestEncoding: true, jestBabel6: true });
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'javascript', framework: 'express', database: 'postgres', testFramework: 'jest' });
    });
    // Formatted as generate formats them: prettier's trailing commas in calls and parameters are ES2017 too.
    const generated = generateScaffold(model, { dir: 'src/idempotency', profile });
    const files = await formatFiles(generated, dir);
    const require = createRequire(path.join(CACHE, 'package.json'));
    const babel = require('babel-core') as { version: string; transform: (code: string, options: object) => unknown };
    expect(babel.version).toMatch(/^6\./);
    const preset = require('babel-preset-jest') as object;
    const errors: string[] = [];
    for (const file of files) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
      if (!file.path.endsWith('.js')) continue;
      try {
        babel.transform(file.contents, { babelrc: false, presets: [preset], filename: file.path });
      } catch (error) {
        errors.push((error as Error).message.split('\n')[0]!.replace(dir, '<project>'));
      }
    }
    expect(errors).toEqual([]);
    suites = generated.filter((file) => file.role === 'tests' && file.path.endsWith('.test.js')).map((file) => file.path);
    expect(suites).toEqual(expect.arrayContaining(['src/idempotency/idempotency.test.js', 'src/idempotency/webhooks/webhooks.test.js']));
  });

  it.skipIf(install !== undefined)('every file of every stack and store parses with that Babel', { timeout: 240_000 }, async () => {
    const require = createRequire(path.join(CACHE, 'package.json'));
    const babel = require('babel-core') as { transform: (code: string, options: object) => unknown };
    const preset = require('babel-preset-jest') as object;
    const profile = { ...(await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'javascript' })) };
    const stacks: Array<Record<string, string>> = [
      ...['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none'].map((framework) => ({ framework })),
      ...['mysql', 'sqlite', 'redis', 'dynamodb'].map((database) => ({ database })),
    ];
    const errors: string[] = [];
    for (const stack of stacks) {
      const model = await modelFor('large-marketplace', (raw) => Object.assign(raw.stack as Record<string, unknown>, { language: 'javascript', testFramework: 'jest', ...stack }));
      for (const file of generateScaffold(model, { dir: 'src/idempotency', profile }).filter((generated) => generated.path.endsWith('.js'))) {
        try {
          babel.transform(file.contents, { babelrc: false, presets: [preset], filename: file.path });
        } catch (error) {
          errors.push(`${JSON.stringify(stack)} ${(error as Error).message.split('\n')[0]!}`);
        }
      }
    }
    expect(errors).toEqual([]);
  });

  it.skipIf(postgres !== undefined)('runs the generated suites with its own Jest against PostgreSQL', { timeout: 300_000 }, async () => {
    expect(dir, 'the parse step ran').not.toBe('');
    const jest = path.join(CACHE, 'node_modules/jest/bin/jest.js');
    const result = await run(process.execPath, [jest, '--ci', '--rootDir', dir, ...suites], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the generated suites failed under Jest ${JEST}:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* failed\b/);
    expect(output).not.toMatch(/\b[1-9]\d* skipped\b/);
    expect(output).toMatch(/idempotency\.test\.js/);
    expect(output).toMatch(/webhooks\.test\.js/);
    expect(output).toMatch(/Tests:\s+[1-9]\d* passed/);
  });
});
