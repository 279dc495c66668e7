import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
  const marker = path.join(cache, 'installed.json');
  const stamp = JSON.stringify({ wanted, overrides, ...(options.peersFromParent ? { peersFromParent: true } : {}) });
  if (existsSync(marker) && (await readFile(marker, 'utf8')) === stamp) return undefined;
  await mkdir(cache, { recursive: true });
  await writeFile(path.join(cache, 'package.json'), JSON.stringify({ private: true, ...(Object.keys(overrides).length > 0 ? { overrides } : {}) }));
  const specs = Object.entries(wanted).map(([name, version]) => `${name}@${version}`);
  try {
    await run(npm, ['install', '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', ...(options.peersFromParent ? ['--legacy-peer-deps'] : []), ...specs], { cwd: cache, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  } catch (error) {
    const reason = `npm could not install ${specs.join(' ')} into ${cache} (${(error as Error).message.split('\n')[0]})`;
    if (process.env.CI && (await registryReachable())) throw new Error(`${reason}; the registry answers, so CI must run these tests.`);
    return reason;
  }
  await writeFile(marker, stamp);
  return undefined;
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
