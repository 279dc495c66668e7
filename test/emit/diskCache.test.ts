import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CACHE_DIR, cacheKey, pruneCache, readCache, writeCache } from '../../src/emit/diskCache.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-cache-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const entry = (key: string) => path.join(root, CACHE_DIR, 'format', key);

describe('project disk cache', () => {
  it('returns what was stored under the same key, and nothing under another', async () => {
    const key = cacheKey('input', 'prettier@3');
    expect(await writeCache(root, 'format', key, 'formatted\n')).toBe(true);
    expect(await readCache(root, 'format', key)).toBe('formatted\n');
    expect(await readCache(root, 'format', cacheKey('input', 'prettier@4'))).toBeUndefined();
    expect(await readCache(root, 'svg', key)).toBeUndefined();
  });

  it('keys parts unambiguously', () => {
    expect(cacheKey('ab', 'c')).not.toBe(cacheKey('a', 'bc'));
    expect(cacheKey('a', 'b')).toBe(cacheKey('a', 'b'));
  });

  it('ignores an entry whose value no longer matches its digest (torn, truncated or edited)', async () => {
    const key = cacheKey('x');
    await writeCache(root, 'format', key, 'export const a = 1;\n');
    const stored = await readFile(entry(key), 'utf8');
    await writeFile(entry(key), stored.replace('a = 1', 'a = 2'));
    expect(await readCache(root, 'format', key)).toBeUndefined();
    await writeFile(entry(key), stored.slice(0, 70));
    expect(await readCache(root, 'format', key)).toBeUndefined();
    await writeFile(entry(key), 'garbage');
    expect(await readCache(root, 'format', key)).toBeUndefined();
    // A good write replaces the bad entry.
    await writeCache(root, 'format', key, 'export const a = 1;\n');
    expect(await readCache(root, 'format', key)).toBe('export const a = 1;\n');
  });

  it('writes through a temp file and rename, leaving no temp behind, and keeps itself out of git', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => cacheKey(String(i)));
    await Promise.all(keys.map((key, i) => writeCache(root, 'format', key, `value ${i}\n`)));
    const names = await readdir(path.join(root, CACHE_DIR, 'format'));
    expect(names.sort()).toEqual([...keys].sort());
    expect(await readFile(path.join(root, CACHE_DIR, '.gitignore'), 'utf8')).toContain('*');
  });

  it('never writes through a symbolic link planted on the way, and reports the miss quietly', async () => {
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'ib-cache-elsewhere-'));
    try {
      await mkdir(path.join(root, '.idempotency-builder'), { recursive: true });
      await symlink(elsewhere, path.join(root, CACHE_DIR));
      const key = cacheKey('y');
      expect(await writeCache(root, 'format', key, 'v')).toBe(false);
      expect(await readdir(elsewhere)).toEqual([]);
      expect(await readCache(root, 'format', key)).toBeUndefined();
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('prunes the entries a run did not use', async () => {
    const [a, b] = [cacheKey('a'), cacheKey('b')];
    await writeCache(root, 'format', a, 'A');
    await writeCache(root, 'format', b, 'B');
    await pruneCache(root, 'format', new Set([b]));
    expect(await readCache(root, 'format', a)).toBeUndefined();
    expect(await readCache(root, 'format', b)).toBe('B');
  });

  it('refuses names that are not digests', async () => {
    await expect(readCache(root, '../x', cacheKey('a'))).rejects.toThrow();
    await expect(readCache(root, 'format', '../../etc/passwd')).rejects.toThrow();
  });
});
