import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_PATH, acquireProjectLock } from '../../src/emit/projectLock.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-lock-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('acquireProjectLock', () => {
  it('one holder at a time; releasing removes the lock and the state folder it created', async () => {
    const release = await acquireProjectLock(root);
    await expect(acquireProjectLock(root)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining(`process ${process.pid} on ${os.hostname()}`) });
    await release();
    expect(await readdir(root)).toEqual([]);
    const again = await acquireProjectLock(root);
    await again();
  });

  it('a stale lock found by two runs at once is taken over by exactly one of them', async () => {
    await mkdir(path.join(root, '.idempotency-builder'));
    await writeFile(path.join(root, LOCK_PATH), JSON.stringify({ pid: await deadPid(), host: os.hostname() }));
    const results = await Promise.allSettled([acquireProjectLock(root), acquireProjectLock(root), acquireProjectLock(root)]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(await readdir(path.join(root, '.idempotency-builder'))).toEqual(['lock']);
    for (const result of results) if (result.status === 'fulfilled') await result.value();
  });

  it('a lock from another host is never taken over (its process cannot be checked)', async () => {
    await mkdir(path.join(root, '.idempotency-builder'));
    await writeFile(path.join(root, LOCK_PATH), JSON.stringify({ pid: await deadPid(), host: `not-${os.hostname()}` }));
    await expect(acquireProjectLock(root)).rejects.toThrow(/is writing this project/);
  });

  it('refuses a symlinked state folder', async () => {
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'ib-lock-elsewhere-'));
    await symlink(elsewhere, path.join(root, '.idempotency-builder'));
    await expect(acquireProjectLock(root)).rejects.toThrow(/\.idempotency-builder is a symbolic link/);
    expect(await readdir(elsewhere)).toEqual([]);
    await rm(elsewhere, { recursive: true, force: true });
  });
});
