import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, readTree, runCli, writeConfig } from './cli.js';

// Environment failures: exit 2, one message plus the fix, no stack trace, and nothing half-written.
const FIXTURE = 'express-stripe-payments';
const dirs: string[] = [];
async function project(parent?: string): Promise<string> {
  // One document file: the scenarios below name it (the fixture's full design is long enough to split otherwise).
  const dir = await copyFixture(FIXTURE, (raw) => { raw['split'] = 'never'; }, parent);
  dirs.push(dir);
  return dir;
}

/** A 160 KiB file system: the document fits, the scaffolding does not. Needs root (CI runners: sudo). */
const tinyDisk = await mkdtemp(path.join(os.tmpdir(), 'ib-tiny-disk-'));
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160k', 'tmpfs', tinyDisk], { stdio: 'ignore' });
  mounted = true;
} catch {
  // Without mount rights the full-disk path is covered by test/emit/writeAtomic.test.ts (simulated ENOSPC).
}

afterAll(async () => {
  if (mounted) execFileSync('umount', [tinyDisk]);
  await Promise.all([...dirs, tinyDisk].map((dir) => rm(dir, { recursive: true, force: true })));
});

const generate = (dir: string, ...flags: string[]) => runCli(['generate', '--cwd', dir, ...flags]);
const expectCleanFailure = (run: { code: number; stderr: string }) => {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toContain('bug in idempotency-builder');
};

describe('generate refuses and fails cleanly', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('refuses --out outside the project root and writes nothing', async () => {
    const dir = await project();
    const run = await generate(dir, '--out', '../../etc/x.html');
    expectCleanFailure(run);
    expect(run.stderr).toContain('Refusing to write ../../etc/x.html: it is outside the project root');
    expect(run.stderr).toContain('Choose an output path inside the project');
    expect(await readdir(dir)).toEqual(['idempotency.config.json']);
  });

  it('a file where a folder should be: names it, says how to fix it, writes nothing', async () => {
    const dir = await project();
    await writeFile(path.join(dir, 'docs'), 'notes\n');
    const run = await generate(dir);
    expectCleanFailure(run);
    expect(run.stderr).toContain('Cannot write docs/idempotency-design.html: docs is a file, but a folder is needed there.');
    expect(run.stderr).toContain('Rename or remove the file docs');
    expect((await readdir(dir)).sort()).toEqual(['docs', 'idempotency.config.json']);
  });

  it('a read-only generated file: says so, leaves it and everything else untouched', async () => {
    const dir = await project();
    await generate(dir, '--date', '2026-12-02');
    await chmod(path.join(dir, 'docs/idempotency-design.html'), 0o444);
    await writeConfig(dir, FIXTURE, (raw) => {
      raw['split'] = 'never';
      raw['retention'] = '96h';
    });
    const before = await readTree(dir);
    const run = await generate(dir);
    expectCleanFailure(run);
    expect(run.stderr).toContain('Cannot write docs/idempotency-design.html: the file is read-only.');
    expect(run.stderr).toContain('chmod u+w docs/idempotency-design.html');
    expect(await readTree(dir)).toEqual(before);
  });

  it('a damaged manifest: explains how to recover instead of guessing who owns what', async () => {
    const dir = await project();
    await mkdir(path.join(dir, '.idempotency-builder'));
    await writeFile(path.join(dir, '.idempotency-builder/manifest.json'), '{"files": 3}');
    const run = await generate(dir);
    expectCleanFailure(run);
    expect(run.stderr).toContain('.idempotency-builder/manifest.json is damaged');
    await expect(stat(path.join(dir, 'docs'))).rejects.toThrow();
  });

  it.runIf(mounted)('a full disk: exit 2, nothing written (every file is staged before any is replaced), no temp files left behind', async () => {
    const reference = await readTree(await (async () => {
      const dir = await project();
      await generate(dir, '--date', '2026-12-02');
      return dir;
    })());
    const dir = await project(tinyDisk);
    const run = await generate(dir, '--date', '2026-12-02');
    expectCleanFailure(run);
    expect(run.stderr).toMatch(/Cannot write \S+: the disk is full\./);
    expect(run.stderr).toContain('Free some space and run the command again');
    const written = await readTree(dir);
    expect([...written.keys()].filter((file) => file.endsWith('.tmp'))).toEqual([]);
    for (const [file, text] of written) {
      if (file === 'idempotency.config.json' || file.startsWith('.idempotency-builder/')) continue;
      expect(text, `${file} is half-written`).toBe(reference.get(file));
    }
    expect([...written.keys()]).toEqual(['idempotency.config.json']);
  });
});

describe('generate never follows a symbolic link for the files it owns', { timeout: CLI_TEST_TIMEOUT }, () => {
  const CANARY = 'ib-canary-5b1f0e';

  it('--diff with the document linked to /proc/self/environ refuses instead of printing the environment', async () => {
    const dir = await project();
    expect((await generate(dir, '--date', '2026-12-02')).code).toBe(0);
    const doc = path.join(dir, 'docs/idempotency-design.html');
    await unlink(doc);
    await symlink('/proc/self/environ', doc);
    for (const flags of [['--diff'], ['--diff', '--force'], ['--check'], ['--dry-run', '--json'], []]) {
      const run = await runCli(['generate', '--cwd', dir, ...flags], { IB_SECRET: CANARY });
      expectCleanFailure(run);
      expect(run.stderr).toContain('Refusing to read docs/idempotency-design.html: docs/idempotency-design.html is a symbolic link');
      expect(run.stdout + run.stderr).not.toContain(CANARY);
    }
    expect((await lstat(doc)).isSymbolicLink()).toBe(true); // left alone
  });

  it('a symlinked state folder is refused; nothing is written through it', async () => {
    const dir = await project();
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'ib-elsewhere-'));
    dirs.push(elsewhere);
    await symlink(elsewhere, path.join(dir, '.idempotency-builder'));
    const run = await generate(dir);
    expectCleanFailure(run);
    expect(run.stderr).toContain('.idempotency-builder is a symbolic link');
    expect(await readdir(elsewhere)).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual(['.idempotency-builder', 'idempotency.config.json']);
  });

  it('a non-normalised output path (./docs/../docs/x.html) is the same file as docs/x.html, never deleted as an orphan', async () => {
    const dir = await project();
    await writeConfig(dir, FIXTURE, (raw) => {
      raw['split'] = 'never';
      raw['output'] = './docs/../docs/design.html';
    });
    expect((await generate(dir, '--date', '2026-12-02')).code).toBe(0);
    const manifest = await readFile(path.join(dir, '.idempotency-builder/manifest.json'), 'utf8');
    expect(manifest).toContain('"path": "docs/design.html"');
    await writeConfig(dir, FIXTURE, (raw) => {
      raw['split'] = 'never';
      raw['output'] = 'docs/design.html';
    });
    const run = await generate(dir, '--check');
    expect(run.code, run.stderr).toBe(0);
    expect((await generate(dir)).code).toBe(0);
    expect(await readFile(path.join(dir, 'docs/design.html'), 'utf8')).toContain('<html');
  });
});
