import { describe, expect, it } from 'vitest';
import type { DdlTable } from '../../src/scaffold/migrationTools/ddlTables.js';
import { drizzleSnapshot, latestSnapshot } from '../../src/scaffold/migrationTools/drizzleSnapshot.js';

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
