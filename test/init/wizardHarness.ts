import { cp, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runInit, type InitFlags, type InitResult } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { createScriptedPrompter, type ScriptStep, type ScriptedPrompter } from '../../src/questions/scriptedPrompter.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A fresh copy of fixtures/init/<name> (or an empty folder), so every test writes into its own project. */
export async function projectFrom(name: string | undefined): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `ib-init-${name ?? 'empty'}-`));
  if (name) await cp(path.join(ROOT, 'fixtures/init', name), dir, { recursive: true });
  return dir;
}

export interface WizardRun {
  result?: InitResult;
  error?: unknown;
  prompter: ScriptedPrompter;
  stdout: string;
  stderr: string;
}

/** Runs the real wizard against a project with a script that fails on any question it does not expect. */
export async function runWizard(cwd: string, script: ScriptStep[], flags: InitFlags = {}): Promise<WizardRun> {
  const prompter = createScriptedPrompter(script);
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const log = createLogger({ out, err, color: false });
  try {
    const result = await runInit({ cwd, date: '2026-01-15', ...flags }, { prompter, interactive: true, log });
    return { result, prompter, stdout, stderr };
  } catch (error) {
    return { error, prompter, stdout, stderr };
  }
}

export async function readConfig(cwd: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(cwd, 'idempotency.config.json'), 'utf8')) as Record<string, unknown>;
}

/** Every file under a folder, relative, sorted: "nothing written" means this list did not change. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}
