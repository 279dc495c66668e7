import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { STATE_DIR } from './projectLock.js';
import { assertNoSymlinks, readInside } from './safePath.js';

/**
 * Derived artefacts kept between runs in the project (`.idempotency-builder/cache/<bucket>/`): prettier's output and
 * diagram SVGs. They are never project output (not in the manifest, ignored by git through the folder's own
 * .gitignore) and never trusted blindly:
 * - the entry's name is a digest of everything that decides its value (the input, the formatter or renderer build and
 *   its options), so a changed input or a rebuilt tool misses instead of reading a stale value;
 * - each entry carries a digest of its value and is ignored when the two disagree (a torn or edited file);
 * - entries are written to a temp file and renamed, so a reader sees a whole entry or none;
 * - any failure (read-only project, symbolic link on the way, full disk) only costs the cache, never the run.
 */
export const CACHE_DIR = `${STATE_DIR}/cache`;

const digestOf = (text: string) => createHash('sha256').update(text).digest('hex');

/** The entry name for a key made of several parts (each part is length-prefixed, so parts cannot run together). */
export function cacheKey(...parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return hash.digest('hex');
}

const entryPath = (bucket: string, key: string) => {
  if (!/^[a-z-]+$/.test(bucket) || !/^[0-9a-f]{16,64}$/.test(key)) throw new Error(`bad cache entry ${bucket}/${key}`);
  return `${CACHE_DIR}/${bucket}/${key}`;
};

/** The cached value, or undefined when there is none or it does not match its digest. */
export async function readCache(root: string, bucket: string, key: string): Promise<string | undefined> {
  const text = await readInside(root, entryPath(bucket, key)).catch(() => undefined);
  if (text === undefined) return undefined;
  const newline = text.indexOf('\n');
  if (newline !== 64) return undefined;
  const value = text.slice(newline + 1);
  return digestOf(value) === text.slice(0, newline) ? value : undefined;
}

let deferred: Array<() => Promise<unknown>> | undefined;

/**
 * Holds this process's cache writes until `flush`, called once the run's own files are written: a run that fails
 * (full disk, read-only file, a file where a folder should be) leaves nothing behind, not even cache entries.
 */
export function deferCacheWrites(): { flush(): Promise<void>; discard(): void } {
  const queue: Array<() => Promise<unknown>> = [];
  deferred = queue;
  const stop = () => {
    if (deferred === queue) deferred = undefined;
  };
  return {
    async flush() {
      stop();
      for (const write of queue.splice(0)) await write();
    },
    discard() {
      stop();
      queue.length = 0;
    },
  };
}

/** Stores a value atomically (temp file + rename). Returns whether it was stored; failures are silent by design. */
export async function writeCache(root: string, bucket: string, key: string, value: string): Promise<boolean> {
  if (deferred) {
    deferred.push(() => writeCache(root, bucket, key, value));
    return true;
  }
  const relative = entryPath(bucket, key);
  const absolute = path.join(path.resolve(root), relative);
  const temp = `${absolute}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await assertNoSymlinks(root, relative, 'write');
    const created = await mkdir(path.dirname(absolute), { recursive: true });
    if (created !== undefined) await writeFile(path.join(path.resolve(root), CACHE_DIR, '.gitignore'), '# Derived files idempotency-builder can recompute.\n*\n', { flag: 'w' });
    await writeFile(temp, `${digestOf(value)}\n${value}`, { encoding: 'utf8', flag: 'wx' });
    await rename(temp, absolute);
    return true;
  } catch {
    await rm(temp, { force: true }).catch(() => undefined);
    return false;
  }
}

/** Removes a bucket's entries not in `keep` (what the last writing run used), so the cache does not grow forever. */
export async function pruneCache(root: string, bucket: string, keep: ReadonlySet<string>): Promise<void> {
  if (deferred) {
    deferred.push(() => pruneCache(root, bucket, keep));
    return;
  }
  const dir = path.join(path.resolve(root), CACHE_DIR, bucket);
  try {
    await assertNoSymlinks(root, `${CACHE_DIR}/${bucket}`, 'remove');
    const names = await readdir(dir);
    // Only entry names: a concurrent writer's temp file is left alone.
    await Promise.all(names.filter((name) => /^[0-9a-f]{16,64}$/.test(name) && !keep.has(name)).map((name) => rm(path.join(dir, name), { force: true })));
  } catch {
    // Nothing cached, or not ours to tidy.
  }
}
