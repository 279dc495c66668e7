import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, readTree, runCli } from './cli.js';

// Ctrl-C / SIGTERM during generate, and two runs in one project. The signal is sent by the CLI process to itself
// right after its first temp file is complete, and the write resumes only once the signal was handled (a preloaded
// hook), so the test needs no sleep or timing guess.
const FIXTURE = 'express-stripe-payments';
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
async function project(): Promise<string> {
  const dir = await copyFixture(FIXTURE);
  dirs.push(dir);
  return dir;
}

const signalAfterFirstTempFile = (signal: NodeJS.Signals) =>
  `data:text/javascript,${encodeURIComponent(`
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const original = fs.promises.writeFile;
let sent = false;
fs.promises.writeFile = async function (file, ...rest) {
  const result = await original.call(this, file, ...rest);
  if (!sent && String(file).endsWith('.tmp')) {
    sent = true;
    // Resume only once the CLI's own handler (registered first) has seen the signal.
    // (Signal watchers do not keep the event loop alive; the interval does, until then.)
    const alive = setInterval(() => {}, 60_000);
    const handled = new Promise((resolve) => process.once(${JSON.stringify(signal)}, resolve));
    process.kill(process.pid, ${JSON.stringify(signal)});
    await handled;
    clearInterval(alive);
  }
  return result;
};
syncBuiltinESMExports();
`)}`;

describe('cancelling generate', { timeout: CLI_TEST_TIMEOUT }, () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while writing: exit %i, nothing written, no temp file, no lock left', async (signal, code) => {
    const dir = await project();
    const run = await runCli(['generate', '--cwd', dir], {}, ['--import', signalAfterFirstTempFile(signal)]);
    expect(run.code, run.stderr).toBe(code);
    expect(run.stderr).toContain('Cancelled; nothing was written.');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual(['idempotency.config.json']); // not even an empty folder
  });

  it('an interrupted regeneration leaves the previous files exactly as they were', async () => {
    const dir = await project();
    expect((await runCli(['generate', '--cwd', dir, '--date', '2026-12-02'])).code).toBe(0);
    const before = await readTree(dir);
    const run = await runCli(['generate', '--cwd', dir, '--date', '2026-12-03'], {}, ['--import', signalAfterFirstTempFile('SIGINT')]);
    expect(run.code, run.stderr).toBe(130);
    expect(await readTree(dir)).toEqual(before);
  });
});

describe('one writing run per project', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('a lock held by a live process: exit 2 naming it, nothing written; --check still runs', async () => {
    const dir = await project();
    await mkdir(path.join(dir, '.idempotency-builder'));
    await writeFile(path.join(dir, '.idempotency-builder/lock'), JSON.stringify({ pid: process.pid, host: os.hostname() }));
    const run = await runCli(['generate', '--cwd', dir]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`Another idempotency-builder run (process ${process.pid} on ${os.hostname()}) is writing this project`);
    expect(run.stderr).toContain('delete .idempotency-builder/lock');
    expect((await readdir(dir)).sort()).toEqual(['.idempotency-builder', 'idempotency.config.json']);
    expect((await runCli(['generate', '--cwd', dir, '--check'])).code).toBe(1); // reads only: no lock needed
  });

  it('a lock left by a process that is gone is taken over and removed afterwards', async () => {
    const dir = await project();
    const child = spawn(process.execPath, ['-e', '']);
    const deadPid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    await mkdir(path.join(dir, '.idempotency-builder'));
    await writeFile(path.join(dir, '.idempotency-builder/lock'), JSON.stringify({ pid: deadPid, host: os.hostname() }));
    const run = await runCli(['generate', '--cwd', dir]);
    expect(run.code, run.stderr).toBe(0);
    // The lock is gone; what a successful run leaves is the manifest and its derived-file cache.
    expect((await readdir(path.join(dir, '.idempotency-builder'))).sort()).toEqual(['cache', 'manifest.json']);
  });

  it('two runs at once: each either writes or is refused by the lock; the result is one consistent generation', async () => {
    const dir = await project();
    const runs = await Promise.all([runCli(['generate', '--cwd', dir, '--date', '2026-12-02']), runCli(['generate', '--cwd', dir, '--date', '2026-12-02'])]);
    for (const run of runs) {
      expect([0, 2], run.stderr).toContain(run.code);
      if (run.code === 2) expect(run.stderr).toContain('is writing this project');
    }
    expect(runs.some((run) => run.code === 0)).toBe(true);
    const tree = await readTree(dir);
    expect([...tree.keys()].filter((file) => file.endsWith('.tmp') || file.endsWith('/lock'))).toEqual([]);
    const check = await runCli(['generate', '--cwd', dir, '--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(dir, '.idempotency-builder/manifest.json'), 'utf8'))).toMatchObject({ date: '2026-12-02' });
  });
});
