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
 */
export async function installIntoCache(cache: string, wanted: Record<string, string>, overrides: Record<string, string> = {}): Promise<string | undefined> {
  const marker = path.join(cache, 'installed.json');
  const stamp = JSON.stringify({ wanted, overrides });
  if (existsSync(marker) && (await readFile(marker, 'utf8')) === stamp) return undefined;
  await mkdir(cache, { recursive: true });
  await writeFile(path.join(cache, 'package.json'), JSON.stringify({ private: true, ...(Object.keys(overrides).length > 0 ? { overrides } : {}) }));
  const specs = Object.entries(wanted).map(([name, version]) => `${name}@${version}`);
  try {
    await run(npm, ['install', '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', ...specs], { cwd: cache, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
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
