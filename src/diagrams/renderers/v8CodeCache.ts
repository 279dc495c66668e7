import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import vm from 'node:vm';

/**
 * The per-user cache folder of this tool (never the user's project): `$XDG_CACHE_HOME`, else the platform's usual
 * place. undefined when there is no home to put it in.
 */
export function toolCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'idempotency-builder');
  if (process.platform === 'win32' && env['LOCALAPPDATA']) return path.join(env['LOCALAPPDATA'], 'idempotency-builder', 'Cache');
  let home: string;
  try {
    home = os.homedir();
  } catch {
    return undefined;
  }
  if (!home) return undefined;
  return process.platform === 'darwin' ? path.join(home, 'Library', 'Caches', 'idempotency-builder') : path.join(home, '.cache', 'idempotency-builder');
}

export interface CachedScript {
  script: vm.Script;
  /** Whether V8 started from a cache written by an earlier run. */
  fromCache: boolean;
  /**
   * Stores V8's code for the script, including what it compiled while running (so call it after the work), when the
   * run did not start from a cache. Never throws: an unwritable cache is a slower next run, nothing more.
   */
  save(): void;
}

/**
 * Compiles a large script (elkjs's 1.6 MB bundle) from V8's code cache when an earlier run left one: Node 20 has no
 * module compile cache (`module.enableCompileCache` is 22.1+), and compiling the bundle, then its functions lazily
 * while it lays out, is most of a cold layout. The entry is named by the source's hash, the Node version, the
 * architecture and V8's cached-data tag (which covers its flags), and V8 rejects data that does not match anyway.
 */
export function compileWithCodeCache(filename: string, source: string, cacheDir = toolCacheDir()): CachedScript {
  const file = cacheDir === undefined ? undefined : codeCacheFile(filename, source, cacheDir);
  let cachedData: Buffer | undefined;
  if (file !== undefined) {
    try {
      cachedData = readFileSync(file);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
  const fromCache = cachedData !== undefined && script.cachedDataRejected !== true;
  let saved = fromCache;
  return {
    script,
    fromCache,
    save() {
      if (saved || file === undefined) return;
      saved = true;
      // Written under a name of its own, then renamed: a reader sees a whole entry or none.
      const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      try {
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(partial, script.createCachedData());
        renameSync(partial, file);
      } catch {
        try {
          rmSync(partial, { force: true });
        } catch {
          // Nothing more to do: the entry is simply missing next time.
        }
      }
    },
  };
}

/**
 * Where the entry for `source` lives. Named by a hash of the whole text: V8's own check compares little more than the
 * source's length. Two installs of the same bundle share an entry, since the data does not depend on the path.
 */
export function codeCacheFile(filename: string, source: string, cacheDir: string): string {
  const hash = createHash('sha256')
    .update(`${process.version}\0${process.arch}\0${cachedDataVersionTag()}\0`)
    .update(source)
    .digest('hex')
    .slice(0, 32);
  return path.join(cacheDir, 'v8', `${path.basename(filename)}-${hash}.bin`);
}
