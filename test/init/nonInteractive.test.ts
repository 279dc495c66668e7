import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, runCli } from '../e2e/cli.js';
import { runBuiltCli } from './runBuiltCli.js';
import { listFiles, projectFrom, readConfig } from './wizardHarness.js';

const HOOKS = pathToFileURL(path.join(import.meta.dirname, '../e2e/recordImports.mjs')).href;
const RECORD_IMPORTS = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`;

// These run bin/idempotency-builder.js: `npm test` builds first; after editing src, run `npm run build`.
describe('init without a terminal', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('CI=true in an empty folder exits 2 before the slow part (no inspector, no renderer loaded), listing the flags to pass, and writes nothing', async () => {
    const cwd = await projectFrom(undefined);
    // What made it fast is what is asserted, not a wall-clock figure that a busy CI runner would miss.
    const log = path.join(cwd, '..', `${path.basename(cwd)}-imports.log`);
    const run = await runCli(['init', '--cwd', cwd], { CI: 'true', IB_IMPORT_LOG: log }, ['--import', RECORD_IMPORTS]);
    expect(run.code).toBe(2);
    const loaded = (await readFile(log, 'utf8')).split('\n');
    await rm(log, { force: true });
    expect(loaded.filter((url) => /node_modules\/(ts-morph|typescript|prettier|beautiful-mermaid|elkjs)\//.test(url))).toEqual([]);
    for (const flag of ['--actions', '--language', '--framework', '--database', '--concurrency', '--retention', '--detection-latency', '--yes']) {
      expect(run.stderr).toContain(flag);
    }
    expect(run.stderr).toContain('CI is set');
    expect(run.stderr).not.toMatch(/\bat .+\.js:\d+/);
    expect(await listFiles(cwd)).toEqual([]);
  });

  it('never prompts when stdin is not a terminal even without CI', async () => {
    const cwd = await projectFrom(undefined);
    const run = await runBuiltCli(['init', '--cwd', cwd], { CI: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not a terminal');
  });

  it('after inspecting a detected project, asks only for what the code cannot say (Q5–Q7)', async () => {
    const cwd = await projectFrom('express-stripe');
    const run = await runBuiltCli(['init', '--cwd', cwd], { CI: 'true' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--concurrency');
    expect(run.stderr).not.toContain('--actions');
    expect(run.stderr).not.toContain('--framework');
  });

  it('names the flag whose value is wrong', async () => {
    const cwd = await projectFrom(undefined);
    const run = await runBuiltCli(['init', '--cwd', cwd, '--concurrency', 'huge', '--yes'], { CI: 'true' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--concurrency "huge" is not allowed');
    expect(run.stderr).toContain('single-server, multi-instance, global');
  });

  it('with every answer as a flag, writes the config and the document', async () => {
    const cwd = await projectFrom('express-stripe');
    const run = await runBuiltCli(
      ['init', '--cwd', cwd, '--concurrency', 'multi-instance', '--retention', '72h', '--detection-latency', '50ms', '--format', 'md', '--no-scaffold', '--date', '2026-01-15'],
      { CI: 'true' },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const config = await readConfig(cwd);
    expect(config).toMatchObject({ format: 'md', output: 'docs/idempotency-design.md', concurrency: 'multi-instance', retention: '72h', scaffold: false, payments: ['stripe'] });
    expect((config['actions'] as unknown[]).length).toBe(3);
    // Inferred, not confirmed by a person: said so in the document.
    expect(config['assumptions']).toEqual([expect.stringContaining('Retry sources were inferred'), expect.stringContaining('Nothing in the code authenticates callers')]);
    // With the global-scope notes (nothing in the fixture authenticates) the design is past the split threshold: a linked folder.
    expect(await readFile(path.join(cwd, 'docs/idempotency-design/01-actions-keys-and-fingerprints.md'), 'utf8')).toContain('handleStripeWebhook');
    expect(run.stdout).toContain('Wrote idempotency.config.json');
    expect(run.stdout).toContain('created docs/idempotency-design/README.md');
  });

  it('--yes in an empty folder produces the technology-agnostic design with its assumptions', async () => {
    const cwd = await projectFrom(undefined);
    const run = await runBuiltCli(['init', '--cwd', cwd, '--yes', '--date', '2026-01-15'], { CI: 'true' });
    // Never a silent document only: the reference target is generated, and the terminal says so.
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining('src/idempotency holds the reference target instead')]);
    expect(run.stdout).toContain('npm i pg prom-client && npm i -D @types/express @types/node @types/pg express vitest@^4.1.12');
    expect(run.code).toBe(0);
    const config = await readConfig(cwd);
    expect(config['actions']).toEqual([expect.objectContaining({ name: 'genericProtectedAction' })]);
    expect(config['stack']).toMatchObject({ language: 'unknown', framework: 'unknown', database: 'unknown' });
    expect((config['assumptions'] as string[]).length).toBeGreaterThanOrEqual(5);
  });

  it('--actions from a file plus stack flags answer Q1 and Q2 without any code to read', async () => {
    const cwd = await projectFrom(undefined);
    await writeFile(path.join(cwd, 'actions.json'), JSON.stringify([{ name: 'submitTransfer', trigger: 'http', route: 'POST /transfers', significantFields: ['fromAccount', 'toAccount', 'amount'] }]));
    const run = await runBuiltCli(
      ['init', '--cwd', cwd, '--actions', 'actions.json', '--language', 'typescript', '--framework', 'express', '--database', 'postgres', '--concurrency', 'global', '--retention', '30d', '--detection-latency', '100ms', '--payments', 'bank-transfer', '--date', '2026-01-15'],
      { CI: 'true' },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const config = await readConfig(cwd);
    expect(config).toMatchObject({ payments: ['bank-transfer'], concurrency: 'global', retrySources: ['client-retry', 'double-click', 'load-balancer-replay'], scaffold: { dir: 'src/idempotency' } });
  });

  it('re-running in CI with an existing config needs no flags', async () => {
    const cwd = await projectFrom('express-stripe');
    const flags = ['--concurrency', 'single-server', '--retention', '48h', '--detection-latency', '20ms', '--no-scaffold', '--date', '2026-01-15'];
    expect((await runBuiltCli(['init', '--cwd', cwd, ...flags], { CI: 'true' })).code).toBe(0);
    const again = await runBuiltCli(['init', '--cwd', cwd, '--date', '2026-01-15'], { CI: 'true' });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(await readConfig(cwd)).toMatchObject({ concurrency: 'single-server', retention: '48h', detectionLatency: '20ms' });
  });
});
