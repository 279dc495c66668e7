import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The parts of a package.json the inspector uses. */
export interface Manifest {
  name?: string;
  dependencies: Set<string>;
  scripts: string[];
  workspaces: string[];
  packageManager?: string;
}

export async function readManifest(dir: string): Promise<Manifest | undefined> {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const dependencies = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    const deps = raw[field];
    if (deps && typeof deps === 'object') for (const name of Object.keys(deps)) dependencies.add(name);
  }
  const scripts = raw['scripts'] && typeof raw['scripts'] === 'object' ? Object.values(raw['scripts']).map(String) : [];
  const ws = raw['workspaces'];
  const workspaces = Array.isArray(ws)
    ? ws.map(String)
    : ws && typeof ws === 'object' && Array.isArray((ws as { packages?: unknown }).packages)
      ? ((ws as { packages: unknown[] }).packages).map(String)
      : [];
  return {
    name: typeof raw['name'] === 'string' ? raw['name'] : undefined,
    dependencies,
    scripts,
    workspaces,
    packageManager: typeof raw['packageManager'] === 'string' ? raw['packageManager'] : undefined,
  };
}
