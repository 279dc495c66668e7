import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, ROOT } from './cli.js';

// The package as users get it: `npm pack` → install the tarball into a fresh project → run it through npx.
// Needs a build (npm test builds first) and the npm registry (or a warm npm cache) for the dependencies.
const work = await mkdtemp(path.join(os.tmpdir(), 'ib-pack-'));
const project = path.join(work, 'app');
let tarball = '';
let packed: string[] = [];

/** npm run from inside `npm test` inherits npm_* settings meant for this repository; the user's shell has none. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...cleanEnv(), NO_COLOR: '1', CI: '1', ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
const npm = (args: string[], cwd: string) => run('npm', args, cwd);
const npx = (args: string[]) => run('npx', ['--no-install', 'idempotency-builder', ...args], project);

beforeAll(async () => {
  // --ignore-scripts: the build already ran; prepack would rebuild dist/ under other test files' feet.
  const pack = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT);
  expect(pack.code, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = path.join(work, info!.filename);
  packed = info!.files.map((file) => file.path);
}, CLI_TEST_TIMEOUT);

afterAll(() => rm(work, { recursive: true, force: true }));

describe('the published package', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('ships the CLI, the built code, the templates and the schema, and nothing from development', () => {
    for (const file of ['package.json', 'bin/idempotency-builder.js', 'dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts', 'schema/idempotency.config.schema.json']) {
      expect(packed).toContain(file);
    }
    expect(packed.some((file) => file.startsWith('templates/scaffold/'))).toBe(true);
    expect(packed.some((file) => file.startsWith('templates/html/'))).toBe(true);
    expect(packed.filter((file) => /^(src|test|fixtures|bench|scripts|coverage|\.tmp)\//.test(file) || file.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('passes publint', async () => {
    const bytes = await readFile(tarball);
    const { messages, pkg } = await publint({ pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) }, level: 'warning', strict: true });
    expect(messages.map((message) => formatMessage(message, pkg, { color: false }))).toEqual([]);
  });

  it('installs into a fresh project and works through npx: --help, init --yes, generate, generate --check', async () => {
    await run('mkdir', ['-p', project], work);
    await writeFile(path.join(project, 'package.json'), `${JSON.stringify({ name: 'checkout-api', private: true, type: 'module' }, null, 2)}\n`);
    const install = await npm(['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], project);
    expect(install.code, install.stderr).toBe(0);

    const help = await npx(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('generate');

    // First contact: init --yes in CI mode writes a config and the design; the result is immediately current.
    const init = await npx(['init', '--yes']);
    expect(init.code, init.stderr).toBe(0);
    await stat(path.join(project, 'idempotency.config.json'));
    const initCheck = await npx(['generate', '--check']);
    expect(initCheck.code, initCheck.stderr).toBe(0);

    // The config's $schema resolves inside the installed package, as editors will look it up.
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as Record<string, unknown>;
    config['$schema'] = './node_modules/idempotency-builder/schema/idempotency.config.schema.json';
    // One document file to look into (the fixture's full design is long enough to split otherwise).
    config['split'] = 'never';
    await stat(path.join(project, config['$schema'] as string));
    await writeFile(path.join(project, 'idempotency.config.json'), `${JSON.stringify(config, null, 2)}\n`);

    const generate = await npx(['generate', '--date', '2026-12-02']);
    expect(generate.code, generate.stderr).toBe(0);
    expect(await readFile(path.join(project, 'docs/idempotency-design.html'), 'utf8')).toContain('<svg');
    await stat(path.join(project, '.idempotency-builder/manifest.json'));

    const check = await npx(['generate', '--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('up to date');
  });
});
