import { describe, expect, it } from 'vitest';
import type { DdlTable } from '../../src/scaffold/migrationTools/ddlTables.js';
import { drizzleSnapshot, latestSnapshot } from '../../src/scaffold/migrationTools/drizzleSnapshot.js';
import { renderToolMigration } from '../../src/scaffold/migrationTools/renderToolMigration.js';

const snap = (id: string, prevId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ id, prevId, version: '7', dialect: 'postgresql', tables: {}, ...extra });
const TABLE: DdlTable = { name: 'store', columns: [{ name: 'k', type: 'varchar(10)', notNull: true }], primaryKey: { columns: ['k'] }, indexes: [], foreignKeys: [] };

describe('latestSnapshot', () => {
  it('follows the prevId chain to its end, whatever the file order', () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    // 0002 names 0001 as parent, so 0002 is the end even though 0001 was listed last.
    expect(latestSnapshot({ '0002_snapshot.json': snap('c', 'b'), '0000_snapshot.json': snap('a', zero), '0001_snapshot.json': snap('b', 'a') })?.['id']).toBe('c');
  });

  it('falls back to the highest-numbered file when the chain forks, skips unreadable files, and is undefined when empty', () => {
    expect(latestSnapshot({ '0000_snapshot.json': snap('a', 'x'), '0001_snapshot.json': snap('b', 'x'), '0002_snapshot.json': '{ not json' })?.['id']).toBe('b');
    expect(latestSnapshot({})).toBeUndefined();
  });
});

describe('drizzleSnapshot', () => {
  it('keeps the previous tables and chains to the previous id', () => {
    const previous = JSON.parse(snap('a', 'zero', { tables: { 'public.users': { name: 'users' } } })) as Record<string, unknown>;
    const next = JSON.parse(drizzleSnapshot({ tables: [TABLE], sequences: [], dialect: 'postgresql', previous, id: 'b' })!) as { id: string; prevId: string; tables: Record<string, unknown> };
    expect(next.id).toBe('b');
    expect(next.prevId).toBe('a');
    expect(Object.keys(next.tables).sort()).toEqual(['public.store', 'public.users']);
  });

  it('writes nothing over a snapshot of another version or dialect (drizzle-kit asks for `drizzle-kit up` there first)', () => {
    const old = JSON.parse(snap('a', 'zero', { version: '6' })) as Record<string, unknown>;
    expect(drizzleSnapshot({ tables: [TABLE], sequences: [], dialect: 'postgresql', previous: old, id: 'b' })).toBeUndefined();
    expect(drizzleSnapshot({ tables: [TABLE], sequences: [], dialect: 'mysql', previous: JSON.parse(snap('a', 'zero')) as Record<string, unknown>, id: 'b' })).toBeUndefined();
  });
});

describe('renderToolMigration (drizzle): the snapshot beside the journal entry', () => {
  const ddl = 'CREATE TABLE IF NOT EXISTS store (\n  k varchar(10) NOT NULL,\n  CONSTRAINT store_pkey PRIMARY KEY (k)\n);\n';
  const entry = (idx: number, tag: string) => ({ idx, version: '7', when: 1767225600000 + idx, tag, breakpoints: true });
  const render = (entries: ReturnType<typeof entry>[], snapshots: Record<string, string>) =>
    renderToolMigration({
      tool: { kind: 'drizzle', folder: 'drizzle', existing: [], dialect: 'postgresql', schemaFile: 'src/db/idempotency.ts', journal: JSON.stringify({ version: '7', dialect: 'postgresql', entries }), snapshots },
      ddl,
      table: 'store',
      stepTable: 'steps',
      language: 'typescript',
      moduleSystem: 'esm',
    }).find((file) => file.path.endsWith('_snapshot.json'));

  it('is added for a journaled store migration that has none while it is the newest, and never after a later migration', () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    const added = render([entry(0, '0000_init'), entry(1, '0001_idempotency')], { '0000_snapshot.json': snap('a', zero) });
    expect(added?.path).toBe('drizzle/meta/0001_snapshot.json');
    expect((JSON.parse(added!.contents) as { prevId: string }).prevId).toBe('a');
    // A later migration already chains to 0000: a snapshot for 0001 now would fork the chain.
    expect(render([entry(0, '0000_init'), entry(1, '0001_idempotency'), entry(2, '0002_more')], { '0000_snapshot.json': snap('a', zero), '0002_snapshot.json': snap('c', 'a') })).toBeUndefined();
  });

  it('is carried over verbatim once written', () => {
    const text = snap('b', 'a');
    expect(render([entry(0, '0001_idempotency')], { '0001_snapshot.json': text })?.contents).toBe(text);
  });
});
