import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import { UserError } from '../errors.js';
import { assertNoSymlinks, resolveInside } from './safePath.js';

export const STATE_DIR = '.idempotency-builder';
export const LOCK_PATH = `${STATE_DIR}/lock`;

interface Holder {
  pid: number;
  host: string;
}

/** Locks held by this process: a forced exit (second Ctrl-C) removes them synchronously. */
const held = new Set<string>();

export function releaseHeldLocksSync(): void {
  for (const file of held) rmSync(file, { force: true });
  held.clear();
}

/** kill(pid, 0) delivers nothing; it only asks whether the process exists (EPERM: it does, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readHolder(file: string): Promise<Holder | undefined> {
  try {
    const raw = JSON.parse(await readFile(file, 'utf8')) as Partial<Holder>;
    return typeof raw.pid === 'number' && typeof raw.host === 'string' ? { pid: raw.pid, host: raw.host } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes a lock left by a dead process. Two runs may find the same stale lock at once: each moves "the lock" aside
 * atomically (rename) and deletes it only if it is still the dead holder's; a fresh lock moved by mistake (the other
 * run got there first) is put back with link(2), which never overwrites. False means: someone else holds it now.
 */
async function takeOver(file: string, dead: Holder): Promise<boolean> {
  const aside = `${file}.${randomBytes(4).toString('hex')}.stale`;
  try {
    await rename(file, aside);
  } catch {
    return true; // Already gone: retry the exclusive create.
  }
  const moved = await readHolder(aside);
  if (moved?.pid === dead.pid && moved.host === dead.host) {
    await rm(aside, { force: true });
    return true;
  }
  await link(aside, file).catch(() => undefined);
  await rm(aside, { force: true });
  return false;
}

/**
 * One writing run per project at a time: `.idempotency-builder/lock` is created exclusively (O_EXCL) and holds the
 * owner's pid and host. A lock whose process is gone on this host (a crash, kill -9) is stale and taken over; a live
 * one, or one from another host (shared folder: liveness cannot be checked), is refused with a clear message.
 * Returns the release function; the state folder is removed again if the lock was all it held.
 */
export async function acquireProjectLock(root: string): Promise<() => Promise<void>> {
  await assertNoSymlinks(root, LOCK_PATH, 'write');
  const dir = resolveInside(root, STATE_DIR);
  const file = resolveInside(root, LOCK_PATH);
  const createdDir = (await mkdir(dir, { recursive: true })) !== undefined;
  const me: Holder = { pid: process.pid, host: os.hostname() };
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${JSON.stringify(me)}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new UserError(`Cannot create ${LOCK_PATH}: ${(error as Error).message}.`, 'Make the project folder writable, or use --check / --dry-run, which take no lock.');
      }
      const holder = await readHolder(file);
      const stale = holder !== undefined && holder.host === me.host && !isAlive(holder.pid);
      if (!stale || attempt >= 3 || !(await takeOver(file, holder))) {
        const who = holder ? `process ${holder.pid} on ${holder.host}` : 'another process';
        throw new UserError(
          `Another idempotency-builder run (${who}) is writing this project; ${LOCK_PATH} is held.`,
          `Wait for it to finish and run the command again. If no such run is alive, delete ${LOCK_PATH}.`,
        );
      }
    }
  }
  held.add(file);
  return async () => {
    held.delete(file);
    const holder = await readHolder(file);
    if (holder?.pid === me.pid && holder.host === me.host) await rm(file, { force: true });
    if (createdDir) await rmdir(dir).catch(() => undefined);
  };
}

