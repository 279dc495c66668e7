import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Installs exact package versions (an old toolchain this repository cannot share its node_modules with) into a
 * scratch folder once; a marker file remembers what is there. Resolves to a skip reason when npm cannot install
 * them. Under CI a reachable registry makes a failed install a failure, never a quiet skip. `overrides` pins
 * transitive packages (an old @types package's dependency ranges float to releases the old compiler cannot parse).
 * `peersFromParent` leaves peer dependencies out (npm's --legacy-peer-deps): a cache inside this repository then
 * shares its copies (one @nestjs/core for the app and the library that extends it).
 */
export async function installIntoCache(cache: string, wanted: Record<string, string>, overrides: Record<string, string> = {}, options: { peersFromParent?: boolean } = {}): Promise<string | undefined> {
  const stamp = JSON.stringify({ wanted, overrides, ...(options.peersFromParent ? { peersFromParent: true } : {}) });
  const current = async (dir: string) => existsSync(path.join(dir, 'installed.json')) && (await readFile(path.join(dir, 'installed.json'), 'utf8')) === stamp;
  if (await current(cache)) return undefined;
  // Installed beside the cache and renamed into place: test files running at once in other workers may install the
  // same cache, and none of them may see a half-written node_modules.
  const staging = `${cache}.${process.pid}-${randomUUID().slice(0, 8)}`;
  await mkdir(staging, { recursive: true });
  await writeFile(path.join(staging, 'package.json'), JSON.stringify({ private: true, ...(Object.keys(overrides).length > 0 ? { overrides } : {}) }));
  const specs = Object.entries(wanted).map(([name, version]) => `${name}@${version}`);
  try {
    await run(npm, ['install', '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', ...(options.peersFromParent ? ['--legacy-peer-deps'] : []), ...specs], { cwd: staging, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const reason = `npm could not install ${specs.join(' ')} into ${cache} (${(error as Error).message.split('\n')[0]})`;
    if (process.env.CI && (await registryReachable())) throw new Error(`${reason}; the registry answers, so CI must run these tests.`);
    return reason;
  }
  await writeFile(path.join(staging, 'installed.json'), stamp);
  for (;;) {
    try {
      await rename(staging, cache);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Another worker finished first: its install is the same. A cache of other versions is replaced.
      if (await current(cache)) {
        await rm(staging, { recursive: true, force: true });
        return undefined;
      }
      await rm(cache, { recursive: true, force: true });
    }
  }
}

async function registryReachable(): Promise<boolean> {
  return run(npm, ['ping'], { timeout: 30_000 }).then(
    () => true,
    () => false,
  );
}

/**
 * Writes generated files into a project folder and type-checks it with the cache's own TypeScript and the project's
 * tsconfig: the compiler's output, '' when the project compiles.
 */
export async function writeAndTypeCheck(cache: string, dir: string, files: ReadonlyArray<{ path: string; contents: string }>): Promise<string> {
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  const tsc = path.join(cache, 'node_modules/typescript/bin/tsc');
  return run(process.execPath, [tsc, '--noEmit', '-p', dir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
    (result) => `${result.stdout}${result.stderr}`,
    (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
  );
}
