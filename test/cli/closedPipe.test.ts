import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/fixtures.js';

// `idempotency-builder init --help | head -3`: the reader closes the pipe after a few lines. The CLI stops quietly
// (exit 0, nothing on stderr) instead of dying on an unhandled EPIPE with a stack trace.

const built = existsSync(path.join(ROOT, 'dist/cli/main.js'));
if (!built) console.warn('closed-pipe test skipped: run `npm run build` first (it runs the built CLI)');

describe.skipIf(!built)('output into a pipe the reader closed', () => {
  it('exits 0 without a stack trace', async () => {
    const child = spawn(process.execPath, [BIN, 'init', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Closed before the first write: every write of the help text meets a closed pipe.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
