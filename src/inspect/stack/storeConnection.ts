import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { located, SEQUELIZE_CONFIG, sequelizeConfigConnections, sequelizercConfigPath } from '../detectors/dbConnection.js';
import type { StoreConnection } from '../types.js';

/** Folders of one-off tooling: a seed or migration script may open the database with an admin's variables. */
const TOOLING = /(^|\/)(scripts?|migrations?|seeds?|seeders|tools)\//;

/**
 * At most one connection per database kind the stack has: the app's own client before one in scripts, migrations or
 * seeds, then the first by file and line, so the answer does not depend on the order files were read in.
 */
export function pickConnections(found: readonly StoreConnection[], databases: readonly string[]): StoreConnection[] {
  const rank = (c: StoreConnection) => Number(TOOLING.test(c.file));
  const ordered = [...found].sort((a, b) => rank(a) - rank(b) || (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  const out: StoreConnection[] = [];
  for (const store of ['mysql', 'postgres'] as const) {
    const first = databases.includes(store) ? ordered.find((c) => c.store === store) : undefined;
    if (first) out.push(first);
  }
  return out;
}

/**
 * The connections sequelize-cli's JSON config file states for the package at `dir` (relative to `root`, '' for the
 * root), at config/config.json or where the package's `.sequelizerc` moves it: not a source file, so the detectors
 * never read it. None when it is absent or unreadable.
 */
export async function sequelizeConfigOf(root: string, dir: string, databases: readonly string[]): Promise<StoreConnection[]> {
  const within = (name: string) => (dir === '' ? name : `${dir}/${name}`);
  const rc = await readFile(path.join(root, within('.sequelizerc')), 'utf8').catch(() => undefined);
  const moved = rc === undefined ? undefined : sequelizercConfigPath(rc);
  // A .js config is a source file: the detector reads it with the others.
  if (moved !== undefined && !moved.endsWith('.json')) return [];
  const rel = within(moved ?? SEQUELIZE_CONFIG);
  const text = await readFile(path.join(root, rel), 'utf8').catch(() => undefined);
  return text === undefined ? [] : sequelizeConfigConnections(text, databases).map((raw) => located(raw, rel));
}
