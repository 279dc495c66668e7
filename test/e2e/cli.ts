import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Time-out for tests that run the CLI or the wizard: a hang detector, never a performance bound. A cold generate
 * takes seconds alone and over a minute on a 2-core machine running other suites (load 15-20); no test may depend
 * on how long that takes.
 */
export const CLI_TEST_TIMEOUT = 600_000;
const BIN = path.join(ROOT, 'bin/idempotency-builder.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would: a child process, no colour, no inherited reproducible-build date. */
export function runCli(args: readonly string[], env: Record<string, string | undefined> = {}, nodeArgs: readonly string[] = []): Promise<CliRun> {
  const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, SOURCE_DATE_EPOCH: undefined, CI: '1' };
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeArgs, BIN, ...args], { env: { ...base, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export type RawConfig = Record<string, unknown>;

/** A fresh project folder outside the repository holding only the fixture config. */
export async function copyFixture(name: string, change: (raw: RawConfig) => void = () => {}, parent = os.tmpdir()): Promise<string> {
  const dir = await mkdtemp(path.join(parent, `ib-e2e-${name}-`));
  await writeConfig(dir, name, change);
  return dir;
}

export async function writeConfig(dir: string, name: string, change: (raw: RawConfig) => void = () => {}): Promise<void> {
  const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs', `${name}.json`), 'utf8')) as RawConfig;
  delete raw['$schema'];
  change(raw);
  await writeFile(path.join(dir, 'idempotency.config.json'), `${JSON.stringify(raw, null, 2)}\n`);
}

/** Every file under dir, by POSIX relative path. */
export async function readTree(dir: string): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const absolute = path.join(entry.parentPath, entry.name);
    tree.set(path.relative(dir, absolute).split(path.sep).join('/'), await readFile(absolute, 'utf8'));
  }
  return new Map([...tree].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export interface JsonReport {
  document: string;
  written: boolean;
  stale?: string[];
  files: Array<{ path: string; class: string; action: string; reason?: string; diff?: string }>;
}

export const actionsOf = (run: CliRun) => Object.fromEntries((JSON.parse(run.stdout) as JsonReport).files.map((file) => [file.path, file.action]));
