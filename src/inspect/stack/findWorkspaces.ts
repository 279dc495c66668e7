import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isSkippedDir } from '../files/classifyPath.js';
import { readManifest, type Manifest } from './readManifest.js';

export interface WorkspacePackage {
  /** Relative to the root, POSIX slashes. */
  dir: string;
  name: string;
  manifest: Manifest;
}

/**
 * Workspace packages from package.json `workspaces` or pnpm-workspace.yaml. Only the glob forms workspaces use in
 * practice are supported: literal dirs, `dir/*` and `dir/**`; negated patterns exclude.
 */
export async function findWorkspaces(root: string, rootManifest: Manifest | undefined): Promise<WorkspacePackage[]> {
  const declared = [...(rootManifest?.workspaces ?? []), ...(await readPnpmWorkspace(root))];
  // No workspace declaration: side-by-side packages (`api/`, `worker/`, `services/billing/`) are still packages,
  // with or without a root package.json; each gets its own stack facts.
  const patterns = declared.length ? declared : await undeclaredPackageDirs(root);
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = new Set(patterns.filter((p) => p.startsWith('!')).map((p) => normalise(p.slice(1))));
  const dirs = new Set<string>();
  for (const pattern of include) for (const dir of await expand(root, normalise(pattern))) dirs.add(dir);
  const packages: WorkspacePackage[] = [];
  for (const dir of [...dirs].sort()) {
    if (exclude.has(dir) || !dir) continue;
    const manifest = await readManifest(path.join(root, dir));
    if (manifest) packages.push({ dir, name: manifest.name ?? dir, manifest });
  }
  return packages;
}

/** Directories up to three levels down that hold a package.json, for repositories that declare no workspaces. */
async function undeclaredPackageDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  async function list(rel: string, depth: number): Promise<void> {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || isSkippedDir(entry.name) || /^(examples?|docs?|scripts|templates?|samples?)$/.test(entry.name)) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (await readManifest(path.join(root, child))) out.push(child);
      // Samples and apps nest packages (`checkout/server/node/package.json`): the nearest manifest is the scope.
      if (depth < 2) await list(child, depth + 1);
    }
  }
  await list('', 0);
  return out;
}

function normalise(pattern: string): string {
  return pattern.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
}

async function readPnpmWorkspace(root: string): Promise<string[]> {
  const text = await readFile(path.join(root, 'pnpm-workspace.yaml'), 'utf8').catch(() => '');
  const out: string[] = [];
  let inPackages = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^packages\s*:/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const match = /^\s*-\s*['"]?([^'"#]+?)['"]?\s*(#.*)?$/.exec(line);
      if (match?.[1]) out.push(match[1]);
    }
  }
  return out;
}

async function expand(root: string, pattern: string): Promise<string[]> {
  const star = pattern.indexOf('*');
  if (star === -1) return [pattern];
  const base = pattern.slice(0, star).replace(/\/$/, '');
  const recursive = pattern.slice(star).startsWith('**');
  const out: string[] = [];
  async function list(rel: string, depth: number): Promise<void> {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || isSkippedDir(entry.name)) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      out.push(child);
      if (recursive && depth < 4) await list(child, depth + 1);
    }
  }
  await list(base, 0);
  return out;
}
