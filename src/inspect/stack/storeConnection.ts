import type { StoreConnection } from '../types.js';

/**
 * At most one connection per database kind the stack has, the first by file and line: a project that opens its
 * database in several places (the app, a migration script) is read where its sorted first file opens it.
 */
export function pickConnections(found: readonly StoreConnection[], databases: readonly string[]): StoreConnection[] {
  const ordered = [...found].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  const out: StoreConnection[] = [];
  for (const store of ['mysql', 'postgres'] as const) {
    const first = databases.includes(store) ? ordered.find((c) => c.store === store) : undefined;
    if (first) out.push(first);
  }
  return out;
}
