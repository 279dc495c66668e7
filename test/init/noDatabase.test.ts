import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit, type InitFlags } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';
import { listFiles, readConfig, ROOT } from './wizardHarness.js';

const run = promisify(execFile);
const made: string[] = [];

/**
 * A copy of fixtures/init/express-no-database (Express + Stripe, no database client anywhere) under the repository's
 * .tmp, so the generated code resolves express, better-sqlite3 and vitest from this repository's node_modules.
 */
async function project(edit?: (dir: string) => Promise<void>): Promise<string> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', 'init-no-database-'));
  made.push(dir);
  await cp(path.join(ROOT, 'fixtures/init/express-no-database'), dir, { recursive: true });
  await edit?.(dir);
  return dir;
}

async function initYes(cwd: string, flags: InitFlags = {}) {
  const out = new PassThrough();
  let stdout = '';
  out.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const log = createLogger({ out, err: out, color: false });
  const result = await runInit({ cwd, yes: true, date: '2026-01-15', ...flags }, { interactive: false, log });
  return { result, stdout };
}

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('init --yes on a project without a database', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('defaults to the embedded SQLite store for one instance, says why in the terminal and the document, and its generated suites pass', async () => {
    const cwd = await project();
    const { result, stdout } = await initYes(cwd);

    const config = await readConfig(cwd);
    expect(config['stack']).toEqual({ language: 'typescript', framework: 'express', database: 'sqlite', broker: 'none', testFramework: 'vitest' });
    expect(config['concurrency']).toBe('single-server');
    const assumptions = config['assumptions'] as string[];
    const note = assumptions.find((line) => line.startsWith('Inspection found no database'));
    expect(note).toContain('embedded SQLite file (better-sqlite3)');
    expect(note).toContain('before running a second instance');
    expect(assumptions.some((line) => line.startsWith('Concurrency was not given: one instance is assumed'))).toBe(true);

    // Terminal: the choice and its reason, and the install hint names the driver.
    expect(stdout).toContain('Stack: Express on SQLite; concurrency single server');
    expect(stdout).toContain('Store: Inspection found no database');
    expect(result.generated.notes.join('\n')).toMatch(/npm i better-sqlite3\b/);
    expect(result.generated.warnings.join('\n')).not.toContain('reference target');

    // Document: the same sentence, and SQLite (not the PostgreSQL reference) as the stack.
    const index = await readFile(path.join(cwd, 'docs/idempotency-design/index.html'), 'utf8');
    expect(index).toContain('the idempotency records live in an embedded SQLite file (better-sqlite3)');
    expect(index).toContain('TypeScript, Express, SQLite, no message broker, tests in Vitest');
    expect(index).not.toContain('PostgreSQL reference schema');

    const files = (await listFiles(cwd)).filter((file) => file.startsWith('src/idempotency/'));
    expect(files).toContain('src/idempotency/sqliteStore.ts');
    expect(files).toContain('src/idempotency/express.ts');

    // The scaffold compiles under --strict and its own suites (middleware and store contract) pass on SQLite.
    const compilerOptions = { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: ['node'] };
    await writeFile(path.join(cwd, 'tsconfig.scaffold.json'), JSON.stringify({ compilerOptions, include: ['src/idempotency'] }));
    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.scaffold.json'], { cwd }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    expect(tsc).toBe('');
    await writeFile(path.join(cwd, 'vitest.config.mjs'), "export default { test: { include: ['src/idempotency/**/*.test.ts'], testTimeout: 30000 } };\n");
    const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
    const { stdout: suites } = await run(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose'], {
      cwd,
      env: { ...process.env, CI: '1', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `generated suites failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}` }));
    expect(suites).toContain('src/idempotency/idempotency.test.ts');
    expect(suites).toContain('src/idempotency/store-contract.test.ts');
    expect(suites).toMatch(/Tests\s+\d+ passed/);
    expect(suites).not.toMatch(/\d+ failed/);
    // Nothing in the fixture authenticates callers, so its action is global: only the per-principal test does not apply.
    expect(suites).toMatch(/Tests\s+\d+ passed \| 1 skipped/);
    expect(suites).toMatch(/↓ [^\n]*key used by another principal/);
  });

  it('keeps the PostgreSQL reference when several instances share the work, and says an embedded file cannot serialise them', async () => {
    const cwd = await project();
    const { result, stdout } = await initYes(cwd, { concurrency: 'multi-instance' });
    const config = await readConfig(cwd);
    expect((config['stack'] as Record<string, unknown>)['database']).toBe('unknown');
    expect(config['concurrency']).toBe('multi-instance');
    const note = (config['assumptions'] as string[]).find((line) => line.startsWith('Inspection found no database'));
    expect(note).toContain('runs as several instances: an embedded SQLite file cannot serialise duplicates that reach different instances, so the design uses the PostgreSQL reference');
    expect(stdout).toContain('Store: Inspection found no database');
    expect(result.generated.model.stack.storeDatabase).toBe('postgres');
    expect(result.generated.warnings.join('\n')).toContain('reference target');
    expect(await listFiles(cwd)).not.toContain('src/idempotency/sqliteStore.ts');
  });

  it('a database named on the command line is the user\'s: --database sqlite with several instances stays SQLite, with no note', async () => {
    const cwd = await project();
    const { result } = await initYes(cwd, { concurrency: 'multi-instance', database: 'sqlite', scaffold: false });
    expect((result.resolution.answers.stack).database).toBe('sqlite');
    expect(result.resolution.storeNote).toBeUndefined();
  });

  it('without a package.json the dependencies were never seen: the database stays unknown (PostgreSQL reference), as before', async () => {
    const cwd = await project((dir) => rm(path.join(dir, 'package.json')));
    const { result } = await initYes(cwd, { scaffold: false });
    expect(result.resolution.answers.stack.database).toBe('unknown');
    expect(result.resolution.answers.concurrency).toBe('multi-instance');
    expect(result.resolution.storeNote).toBeUndefined();
  });
});
