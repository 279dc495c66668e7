import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold } from '../../src/scaffold/index.js';
import { generateAndCompile, modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason, runGeneratedSuite } from './harness.js';
import { generateProfileProject, profileCase, TSC } from './profileCases.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`form-field key suites against PostgreSQL skipped: ${skip}`);

/**
 * Issue #15: when a server-rendered form posts an HTTP action (`key.field`), the generated idempotency.test.ts drives
 * that path too: a urlencoded POST with the key in the field and no header runs once, the same field value replays,
 * the field sent twice is 400. Run for real on Express + PostgreSQL in each runner the profiles cover.
 */
const FORM_TESTS = [
  'form post: the key in the form field and no header runs once; the same field again replays',
  'form post: the key field sent twice is 400 problem+json, and nothing runs',
];

/** The minimal booking design on Express, its one action posted by a form with the key in `bookingKey`. */
const posted = (raw: Record<string, unknown>, stack: Record<string, unknown> = {}) => {
  Object.assign(raw.stack as Record<string, unknown>, { framework: 'express', ...stack });
  (raw.actions as Array<Record<string, unknown>>)[0]!.key = { source: 'client', field: 'bookingKey' };
};

const suiteOf = (files: ReadonlyArray<{ path: string; contents: string }>) => files.find((file) => /\/idempotency\.(test|spec)\.[jt]s$/.test(file.path))!.contents;

describe('the generated suite and the form-field key', () => {
  it('has the form scenarios for a form-posted action, posting the field the design names; none without one', async () => {
    const suite = suiteOf(generateScaffold(await modelFor('minimal-one-action', (raw) => posted(raw)), { dir: 'src/idempotency' }));
    for (const name of FORM_TESTS) expect(suite).toContain(name);
    expect(suite).toContain("form.append('bookingKey', key)");
    expect(suite).toContain("['content-type', 'application/x-www-form-urlencoded']");
    const plain = suiteOf(generateScaffold(await modelFor('minimal-one-action', (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework: 'express' })), { dir: 'src/idempotency' }));
    expect(plain).not.toContain('form post:');
  });

  it('NestJS on Express parses forms too, so its suite has them', async () => {
    const suite = suiteOf(generateScaffold(await modelFor('minimal-one-action', (raw) => posted(raw, { framework: 'nestjs' })), { dir: 'src/idempotency' }));
    for (const name of FORM_TESTS) expect(suite).toContain(name);
  });
});

describe.skipIf(skip !== undefined)('the form scenarios pass against the real PostgreSQL', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('Express, vitest (tsc --strict)', { timeout: 240_000 }, async () => {
    const generated = await generateAndCompile(await modelFor('minimal-one-action', (raw) => posted(raw)), 'form-key-express');
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
    const stdout = await runGeneratedSuite(generated.dir, { files: ['src/idempotency/idempotency.test.ts'] });
    for (const name of FORM_TESTS) expect(stdout).toContain(name);
    expect(stdout).not.toMatch(/skipped/);
  });

  it('NestJS on its Express platform, vitest (tsc --strict)', { timeout: 240_000 }, async () => {
    const generated = await generateAndCompile(await modelFor('minimal-one-action', (raw) => posted(raw, { framework: 'nestjs' })), 'form-key-nestjs', { experimentalDecorators: true, emitDecoratorMetadata: true });
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
    const stdout = await runGeneratedSuite(generated.dir, { files: ['src/idempotency/idempotency.test.ts'] });
    for (const name of FORM_TESTS) expect(stdout).toContain(name);
  });

  it.each(['ts-cjs-no-interop-es2019-jest', 'ts-cjs-interop-es2019-mocha', 'js-esm-node-test', 'js-cjs-jest'])('Express, profile %s', { timeout: 240_000 }, async (label) => {
    const profile = profileCase(label);
    const model = await modelFor('minimal-one-action', (raw) => posted(raw, { language: profile.language, testFramework: profile.runner }));
    const { dir, files } = await generateProfileProject(profile, model, `form-${label}`);
    dirs.push(dir);
    for (const name of FORM_TESTS) expect(suiteOf(files), label).toContain(name);
    if (profile.language === 'typescript') {
      const tsc = await run(process.execPath, [TSC, '-p', dir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
        () => '',
        (error: { stdout?: string }) => String(error.stdout),
      );
      expect(tsc).toBe('');
    }
    // Jest names each test only when verbose.
    const result = await run(process.execPath, [...profile.command(dir), ...(profile.runner === 'jest' ? ['--verbose'] : [])], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated ${profile.runner} suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* (failed|failing)\b|# fail [1-9]/);
    expect(output).toMatch(/\b[1-9]\d* pass(ed|ing)?\b|# pass [1-9]/);
    expect(output).toContain(FORM_TESTS[1]);
  });
});
