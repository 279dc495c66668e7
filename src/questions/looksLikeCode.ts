import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Anything inspection could read: a manifest or a source file near the top. Keeps an empty folder instant. */
export async function looksLikeCode(root: string, depth = 0): Promise<boolean> {
  if (depth === 0 && existsSync(path.join(root, 'package.json'))) return true;
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isFile() && /\.(?:[cm]?[jt]sx?)$/.test(entry.name)) return true;
  }
  if (depth >= 2) return false;
  for (const entry of entries) {
    if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules' && (await looksLikeCode(path.join(root, entry.name), depth + 1))) return true;
  }
  return false;
}
