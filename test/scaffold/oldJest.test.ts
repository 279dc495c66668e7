import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { installIntoCache } from './npmCache.js';

const run = promisify(execFile);

/**
 * A 2020-21 JavaScript project on Jest 26 (hagopj13/node-express-boilerplate's toolchain): CommonJS, no jest config
 * at all, so Jest 26's default jsdom environment applies unless the suite pins its own, and Jest 26's node
 * environment has no fetch, AbortController or performance on its global. Jest 26 cannot share this repository's
 * node_modules (it would pick up Jest 29's environment packages), so it and the packages the scaffold imports are
 * installed once into a scratch folder under the OS temp dir, where the project lives too.
 */
const JEST26 = '26.6.3';
const packages = async () => {
  const version = async (name: string) => (JSON.parse(await readFile(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  // Express 4, as such projects have it: Express 5 itself requires `node:` builtins, which Jest 26 cannot resolve.
  return { jest: JEST26, pg: await version('pg'), express: '4.21.2' };
};
const CACHE = path.join(os.tmpdir(), `idempotency-builder-jest${JEST26}`);

const skip = (await postgresSkipReason()) ?? (await installIntoCache(CACHE, await packages()));
if (skip) console.warn(`Jest 26 suite skipped: ${skip}`);

describe('a JavaScript CommonJS project on Jest 26', () => {
  let dir = '';
  afterAll(async () => {
    if (dir && !process.env.KEEP_PROFILE_PROJECTS) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip !== undefined)('runs the generated suite with its own Jest, in the default configuration, against PostgreSQL', { timeout: 240_000 }, async () => {
    await mkdir(path.join(CACHE, 'projects'), { recursive: true });
    dir = await mkdtemp(path.join(CACHE, 'projects', 'js-cjs-'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, scripts: { test: 'jest' }, devDependencies: { jest: `^${JEST26}` } }));
    const profile = await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'javascript' });
    expect(profile).toMatchObject({ language: 'javascript', moduleSystem: 'commonjs', testRunner: 'jest', bareBuiltins: true });
    const model = await modelFor('express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: 'javascript', testFramework: 'jest' });
    });
    const files = generateScaffold(model, { dir: 'src/idempotency', profile });
    for (const file of files) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
    }
    const suites = files.filter((file) => file.role === 'tests' && file.path.endsWith('.test.js'));
    expect(suites.length).toBeGreaterThan(0);
    for (const suite of suites) {
      expect(suite.contents, suite.path).toMatch(/^\/\*\*\n \* @jest-environment node\n \*\//);
      // No dynamic import() in CommonJS: Jest 26 cannot run one without --experimental-vm-modules (JSDoc types may name modules).
      expect(suite.contents.replace(/\/\*[\s\S]*?\*\//g, ''), suite.path).not.toMatch(/\bimport\(/);
    }

    const jest = path.join(CACHE, 'node_modules/jest/bin/jest.js');
    const result = await run(process.execPath, [jest, '--ci', '--rootDir', dir, ...suites.map((suite) => suite.path)], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the generated suite failed under Jest ${JEST26}:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* failed\b/);
    expect(output).toMatch(/Tests:\s+(\d+ skipped, )?[1-9]\d* passed/);
  });
});
