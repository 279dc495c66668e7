import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './wizardHarness.js';

export const BIN = path.join(ROOT, 'bin/idempotency-builder.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built CLI in a child process with pipes (so never a TTY). No timing: tests must pass on a saturated machine. */
export function runBuiltCli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, SOURCE_DATE_EPOCH: undefined, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
