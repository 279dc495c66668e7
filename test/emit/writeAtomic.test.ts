import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as FsPromises from 'node:fs/promises';
import type { PlannedWrite } from '../../src/emit/planWrites.js';

// Simulates a full disk on the next temp-file write: real ENOSPC needs a tiny file system (see test/e2e/errors).
const failNext = vi.hoisted(() => ({ code: undefined as string | undefined, after: 0 }));
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof FsPromises>();
  return {
    ...actual,
    writeFile: async (...args: Parameters<typeof actual.writeFile>) => {
      if (failNext.code && String(args[0]).endsWith('.tmp') && failNext.after-- <= 0) {
        const code = failNext.code;
        failNext.code = undefined; // Fail once, like a disk that fills up mid-run.
        // A real full disk leaves a partial temp file behind before failing.
        await actual.writeFile(args[0], 'partial');
        throw Object.assign(new Error(`${code}: simulated`), { code });
      }
      return actual.writeFile(...args);
    },
  };
});

const { writeAtomic } = await import('../../src/emit/writeAtomic.js');
const { applyPlan } = await import('../../src/emit/applyPlan.js');
const { readManifest } = await import('../../src/emit/manifest.js');

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-write-'));
  failNext.code = undefined;
  failNext.after = 0;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const write = (p: string, contents = 'generated\n', action: PlannedWrite['action'] = 'create'): PlannedWrite => ({ path: p, contents, class: 'managed', action });

describe('writeAtomic', () => {
  it('keeps the permissions of the file it replaces', async () => {
    const file = path.join(root, 'run.sh');
    await writeFile(file, 'old\n');
    await chmod(file, 0o755);
    await writeAtomic(file, 'new\n');
    expect((await stat(file)).mode & 0o777).toBe(0o755);
    expect(await readFile(file, 'utf8')).toBe('new\n');
  });

  it('on a full disk: a clear error, the old file intact, no temp file left', async () => {
    const file = path.join(root, 'design.html');
    await writeFile(file, 'old\n');
    failNext.code = 'ENOSPC';
    await expect(writeAtomic(file, 'new\n', 'design.html')).rejects.toMatchObject({ exitCode: 2, message: 'Cannot write design.html: the disk is full.' });
    expect(await readFile(file, 'utf8')).toBe('old\n');
    expect(await readdir(root)).toEqual(['design.html']);
  });
});

describe('applyPlan preflight', () => {
  it('a file where a folder should be: stops before writing anything', async () => {
    await writeFile(path.join(root, 'docs'), 'a file named docs\n');
    const plan = [write('src/first.ts'), write('docs/idempotency-design.html')];
    await expect(applyPlan(root, plan)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('docs is a file, but a folder is needed'), fix: expect.stringContaining('Rename or remove') });
    expect(await readdir(root)).toEqual(['docs']);
  });

  it('a folder where the file goes, and a read-only file: clear errors, nothing written', async () => {
    await mkdir(path.join(root, 'docs/idempotency-design.html'), { recursive: true });
    await expect(applyPlan(root, [write('a.ts'), write('docs/idempotency-design.html')])).rejects.toThrow(/a folder with that name exists/);
    await writeFile(path.join(root, 'locked.yml'), 'old\n');
    await chmod(path.join(root, 'locked.yml'), 0o444);
    await expect(applyPlan(root, [write('a.ts'), write('locked.yml', 'new\n', 'update')])).rejects.toMatchObject({ fix: expect.stringContaining('chmod u+w locked.yml') });
    expect(await readFile(path.join(root, 'locked.yml'), 'utf8')).toBe('old\n');
    await expect(stat(path.join(root, 'a.ts'))).rejects.toThrow();
  });

  it('refuses to follow a symlinked folder, inside or outside the project', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'ib-outside-'));
    await symlink(outside, path.join(root, 'docs'));
    await mkdir(path.join(root, 'real'));
    await symlink(path.join(root, 'real'), path.join(root, 'alias'));
    await expect(applyPlan(root, [write('docs/idempotency-design.html')])).rejects.toMatchObject({ exitCode: 2, message: 'Refusing to write docs/idempotency-design.html: docs is a symbolic link.' });
    await expect(applyPlan(root, [write('alias/x.yml')])).rejects.toThrow(/alias is a symbolic link/);
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(path.join(root, 'real'))).toEqual([]);
    await rm(outside, { recursive: true, force: true });
  });

  it('a symlinked state folder: refused before anything is written', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'ib-outside-'));
    await symlink(outside, path.join(root, '.idempotency-builder'));
    await expect(readManifest(root)).rejects.toThrow(/\.idempotency-builder is a symbolic link/);
    await expect(applyPlan(root, [write('a.ts', 'a\n')])).rejects.toThrow(/\.idempotency-builder is a symbolic link/);
    expect((await readdir(root)).sort()).toEqual(['.idempotency-builder']);
    expect(await readdir(outside)).toEqual([]);
    await rm(outside, { recursive: true, force: true });
  });

  it('a disk filling up half-way: nothing replaced, no temp file, the manifest untouched', async () => {
    failNext.code = 'ENOSPC';
    failNext.after = 1; // a.ts is staged, b.ts hits the full disk before anything is renamed into place.
    await expect(applyPlan(root, [write('a.ts', 'a\n'), write('b.ts', 'b\n')])).rejects.toThrow(/b\.ts: the disk is full/);
    expect(await readdir(root)).toEqual([]);
    expect((await readManifest(root)).files).toEqual([]);
  });

  it('cancelled while staging: nothing written, no temp file, CancelledError (exit 130)', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(applyPlan(root, [write('a.ts', 'a\n')], { signal: controller.signal })).rejects.toMatchObject({ exitCode: 130 });
    expect(await readdir(root)).toEqual([]);
  });
});
