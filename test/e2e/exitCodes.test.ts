import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, ROOT, runCli, type CliRun } from './cli.js';

// CONTRACT §1: 0 ok, 1 findings, 2 usage/config/environment, 70 internal error, 130 cancelled. One row per command
// and failure kind, run through the built CLI exactly as a script would see it.
const dirs: string[] = [];
let project: string;
let empty: string;
beforeAll(async () => {
  project = await copyFixture('minimal-one-action');
  empty = await mkdtemp(path.join(os.tmpdir(), 'ib-exit-empty-'));
  dirs.push(project, empty);
  const first = await runCli(['generate', '--cwd', project, '--date', '2026-12-02']);
  expect(first.code, first.stderr).toBe(0);
}, CLI_TEST_TIMEOUT);
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const noStack = (run: CliRun) => expect(run.stderr).not.toMatch(/\n\s+at /);

describe('exit codes', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('0: --version prints the package version, --help lists the exit codes (program and every command)', async () => {
    const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const run = await runCli(['--version']);
    expect(run).toMatchObject({ code: 0, stdout: `${version}\n` });
    for (const args of [['--help'], ['generate', '--help'], ['init', '--help'], ['inspect', '--help'], ['verify', '--help']]) {
      const help = await runCli(args);
      expect(help.code, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(/Exit codes:[\s\S]*\b2 +usage[\s\S]*\b70 +internal error[\s\S]*\b130 +cancelled/);
    }
  });

  it.each([
    ['no command', [], /Usage: idempotency-builder/],
    ['an unknown command', ['frob'], /unknown command 'frob'/],
    ['generate --format pdf', ['generate', '--format', 'pdf'], /Allowed choices are html, md/],
    ['generate --split sometimes', ['generate', '--split', 'sometimes'], /Allowed choices are auto, always, never/],
    ['generate --diagrams x', ['generate', '--diagrams', 'x'], /Allowed choices are beautiful-mermaid, mermaid-cli/],
    ['generate --bogus', ['generate', '--bogus'], /unknown option '--bogus'/],
    ['init --format pdf', ['init', '--format', 'pdf', '--yes'], /--format "pdf" is not allowed[\s\S]*html, md/],
    ['init --concurrency often', ['init', '--concurrency', 'often', '--yes'], /single-server, multi-instance, global/],
    ['inspect --bogus', ['inspect', '--bogus'], /unknown option '--bogus'/],
    ['verify without a path', ['verify'], /missing required argument 'path'/],
  ])('2: usage error, %s', async (_name, args, message) => {
    const run = await runCli(args.length > 0 && args[0] !== 'verify' && args[0] !== 'frob' ? [...args, '--cwd', empty] : args);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout + run.stderr).toMatch(message);
    noStack(run);
  });

  it('2: environment and config errors, per command', async () => {
    const generate = await runCli(['generate', '--cwd', empty]);
    expect(generate.code, generate.stderr).toBe(2);
    expect(generate.stderr).toContain('idempotency.config.json');
    const init = await runCli(['init', '--cwd', empty]);
    expect(init.code, init.stderr).toBe(2);
    expect(init.stderr).toMatch(/--actions/);
    const inspect = await runCli(['inspect', path.join(empty, 'missing')]);
    expect(inspect.code, inspect.stderr).toBe(2);
    const inspectTwice = await runCli(['inspect', project, '--cwd', empty]);
    expect(inspectTwice.code, inspectTwice.stderr).toBe(2);
    expect(inspectTwice.stderr).toContain('Pass the project folder once');
    const verify = await runCli(['verify', path.join(empty, 'missing.html')]);
    expect(verify.code, verify.stderr).toBe(2);
    for (const run of [generate, init, inspect, inspectTwice, verify]) noStack(run);
  });

  it('0 and 1: success, then findings (stale files, a document failing verification)', async () => {
    expect((await runCli(['generate', '--cwd', project, '--check'])).code).toBe(0);
    expect((await runCli(['verify', path.join(project, 'docs/idempotency-design.html')])).code).toBe(0);
    const inspected = await runCli(['inspect', '--cwd', project, '--json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect((JSON.parse(inspected.stdout) as { root: string }).root).toBe(project);

    const broken = path.join(empty, 'broken.html');
    await writeFile(broken, '<!doctype html><html><body><a href="#nowhere">x</a><script>1</script></body></html>\n');
    const verify = await runCli(['verify', broken]);
    expect(verify.code, verify.stderr).toBe(1);

    const config = path.join(project, 'idempotency.config.json');
    const raw = JSON.parse(await readFile(config, 'utf8')) as Record<string, unknown>;
    await writeFile(config, JSON.stringify({ ...raw, retention: '48h' }));
    const check = await runCli(['generate', '--cwd', project, '--check']);
    expect(check.code, check.stderr).toBe(1);
    expect(check.stderr).toContain('docs/idempotency-design.html (differs)');
    await writeFile(config, JSON.stringify(raw));
  });

  it('70: an internal error says it is a bug and asks for a report', async () => {
    // A bug stand-in: the first call to Date#toISOString inside generate throws a TypeError.
    const hook = `data:text/javascript,${encodeURIComponent('Date.prototype.toISOString = function () { throw new TypeError("simulated bug"); };')}`;
    const run = await runCli(['generate', '--cwd', project, '--dry-run'], {}, ['--import', hook]);
    expect(run.code, run.stderr).toBe(70);
    expect(run.stderr).toContain('This is a bug in idempotency-builder: simulated bug');
    expect(run.stderr).toContain('Please report it');
  });
});
