import { readFile } from 'node:fs/promises';
import { CONNECTION_MENTIONS, located, prismaConnection, scanConnections } from '../detectors/dbConnection.js';
import { originOf } from '../analyseFile.js';
import { lineOf } from '../parse/astHelpers.js';
import { indexSource } from '../parse/indexSource.js';
import { parseSource } from '../parse/parseSource.js';
import { walkProject } from '../files/walkProject.js';
import type { StoreConnection } from '../types.js';
import { configuredDialects } from './detectStack.js';
import { pickConnections, sequelizeConfigOf } from './storeConnection.js';

/**
 * How the project at `root` connects to its `store` database, for apply (which has no inspection at hand): the
 * inspector's own file list and connection detector, over only the files whose text mentions a client, the Prisma
 * schemas and sequelize-cli's config/config.json. Files under `skip` (the generated scaffold) are not the project's own code.
 */
export async function findStoreConnection(root: string, store: string | undefined, skip?: string): Promise<StoreConnection | undefined> {
  if (store !== 'postgres' && store !== 'mysql') return undefined;
  const { files } = await walkProject(root);
  const found: StoreConnection[] = await sequelizeConfigOf(root, '', [store]);
  for (const file of files) {
    if (skip !== undefined && (file.rel === skip || file.rel.startsWith(`${skip}/`))) continue;
    const isPrisma = file.rel.endsWith('.prisma');
    if (file.kind !== 'source' && !isPrisma) continue;
    const text = await readFile(file.abs, 'utf8').catch(() => '');
    if (isPrisma) {
      const raw = prismaConnection(text);
      if (raw) found.push(located(raw, file.rel));
      continue;
    }
    if (!CONNECTION_MENTIONS.test(text)) continue;
    const { sf } = parseSource(file.rel, text, { parents: false });
    const { imports } = indexSource(sf, file.rel);
    const raw = scanConnections(sf, { line: (node) => lineOf(sf, node), originOf: (expr) => originOf(expr, imports), databases: [store] });
    found.push(...raw.map((r) => located(r, file.rel)));
  }
  return pickConnections(found, [store])[0];
}

/**
 * The ORM configuration that connects to `store` with its host written in the code (`type: 'mysql', host:
 * '192.168.0.106'`): the place apply points at when the instance cannot read the same settings (it never copies
 * written values, a password among them, into another file). Undefined when none does.
 */
export async function writtenConnectionAt(root: string, store: 'postgres' | 'mysql', skip?: string): Promise<{ file: string; line: number } | undefined> {
  const { files } = await walkProject(root);
  for (const file of files) {
    if (file.kind !== 'source' || (skip !== undefined && (file.rel === skip || file.rel.startsWith(`${skip}/`)))) continue;
    const text = await readFile(file.abs, 'utf8').catch(() => '');
    const host = /\bhost\s*:\s*['"`]/.exec(text);
    if (!host || !configuredDialects(text).includes(store)) continue;
    return { file: file.rel, line: text.slice(0, host.index).split('\n').length };
  }
  return undefined;
}
