import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertNoSymlinks, normalizeRelative, readInside } from '../../src/emit/safePath.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-safe-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('normalizeRelative', () => {
  it.each([
    ['docs/../docs/x.html', 'docs/x.html'],
    ['./x', 'x'],
    ['docs//x.html', 'docs/x.html'],
    ['docs/./split/', 'docs/split'],
    ['.idempotency-builder/manifest.json', '.idempotency-builder/manifest.json'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeRelative(input)).toBe(expected);
  });

  it.each(['../x.html', 'docs/../../x.html', '/etc/passwd', '.', '', '..'])('refuses %j with exit 2', (input) => {
    expect(() => normalizeRelative(input)).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringContaining('outside the project root') }));
  });
});

describe('readInside', () => {
  it('reads a regular file, and reads a missing file or a folder as absent', async () => {
    await mkdir(path.join(root, 'docs'));
    await writeFile(path.join(root, 'docs/x.md'), '# x\n');
    expect(await readInside(root, './docs/../docs/x.md')).toBe('# x\n');
    expect(await readInside(root, 'docs/missing.md')).toBeUndefined();
    expect(await readInside(root, 'nowhere/missing.md')).toBeUndefined();
    expect(await readInside(root, 'docs')).toBeUndefined();
  });

  it('refuses a link as the file or anywhere on the way, even one that stays inside the project', async () => {
    await mkdir(path.join(root, 'real'));
    await writeFile(path.join(root, 'real/x.md'), 'inside\n');
    await symlink(path.join(root, 'real'), path.join(root, 'docs'));
    await symlink(path.join(root, 'real/x.md'), path.join(root, 'real/y.md'));
    await symlink('/proc/self/environ', path.join(root, 'real/env.md'));
    await expect(readInside(root, 'docs/x.md')).rejects.toMatchObject({ exitCode: 2, message: 'Refusing to read docs/x.md: docs is a symbolic link (to ' + JSON.stringify(path.join(root, 'real')) + ').' });
    await expect(readInside(root, 'real/y.md')).rejects.toThrow(/real\/y\.md is a symbolic link/);
    await expect(readInside(root, 'real/env.md')).rejects.toThrow(/real\/env\.md is a symbolic link/);
    await expect(assertNoSymlinks(root, 'docs/new/file.md', 'write')).rejects.toThrow(/Refusing to write docs\/new\/file\.md: docs is a symbolic link/);
  });

  it('refuses a named pipe where a file belongs instead of blocking on it', async () => {
    try {
      execFileSync('mkfifo', [path.join(root, 'pipe.md')]);
    } catch {
      console.log('Skipping the FIFO case: mkfifo is not available.');
      return;
    }
    await expect(readInside(root, 'pipe.md')).rejects.toMatchObject({ exitCode: 2, message: 'Refusing to read pipe.md: it is not a regular file.' });
  });
});
