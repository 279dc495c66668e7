import type { DdlColumn, DdlTable } from './ddlTables.js';
import type { DrizzleDialect } from './drizzleSchema.js';

type Json = Record<string, unknown>;

/** The snapshot versions whose table shape this writes: drizzle-kit 0.2x–0.31 (PostgreSQL 7, MySQL 5, SQLite 6). */
export const SNAPSHOT_VERSION: Record<DrizzleDialect, string> = { postgresql: '7', mysql: '5', sqlite: '6' };
const NO_PARENT = '00000000-0000-0000-0000-000000000000';

/**
 * The latest snapshot of a drizzle-kit migrations folder: the end of the id/prevId chain (the one no other snapshot
 * names as its parent), else the highest-numbered file when the chain is ambiguous; undefined when there is none.
 * A snapshot that is not JSON is left out rather than guessed at.
 */
export function latestSnapshot(snapshots: Readonly<Record<string, string>>): Json | undefined {
  const parsed: Array<[string, Json]> = [];
  for (const [name, text] of Object.entries(snapshots)) {
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) parsed.push([name, value as Json]);
    } catch {
      // unreadable: drizzle-kit would refuse it too
    }
  }
  parsed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parents = new Set(parsed.map(([, snapshot]) => snapshot['prevId']));
  const ends = parsed.filter(([, snapshot]) => !parents.has(snapshot['id']));
  return (ends.length === 1 ? ends[0] : parsed.at(-1))?.[1];
}

/**
 * drizzle-kit's snapshot after the store's migration: the previous snapshot (or an empty one) plus the store's
 * tables, keys, indexes and sequences, written as drizzle-kit would serialise the schema module renderDrizzleSchema
 * prints for the same tables, so `drizzle-kit generate` finds nothing to add. undefined when the previous snapshot
 * is of another dialect or a version whose shape this does not write (drizzle-kit asks for `drizzle-kit up` first).
 */
export function drizzleSnapshot(input: { tables: readonly DdlTable[]; sequences: readonly string[]; dialect: DrizzleDialect; previous?: Json; id: string }): string | undefined {
  const { dialect, previous } = input;
  const version = SNAPSHOT_VERSION[dialect];
  if (previous && (previous['version'] !== version || previous['dialect'] !== dialect)) return undefined;
  const prevId = typeof previous?.['id'] === 'string' ? previous['id'] : NO_PARENT;
  const record = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
  const tables = { ...record(previous?.['tables']) };
  for (const table of input.tables) {
    if (dialect === 'postgresql') tables[`public.${table.name}`] = pgTable(table);
    else if (dialect === 'sqlite') tables[table.name] = sqliteTable(table);
    else tables[table.name] = mysqlTable(table);
  }
  if (dialect === 'postgresql') {
    const sequences = { ...record(previous?.['sequences']) };
    for (const name of input.sequences) {
      sequences[`public.${name}`] = { name, schema: 'public', increment: '1', startWith: '1', minValue: '1', maxValue: '9223372036854775807', cache: '1', cycle: false };
    }
    const snapshot = { enums: {}, schemas: {}, roles: {}, policies: {}, views: {}, ...previous, id: input.id, prevId, version, dialect, tables, sequences, _meta: { columns: {}, schemas: {}, tables: {} } };
    return `${JSON.stringify(snapshot, null, 2)}\n`;
  }
  if (dialect === 'sqlite') {
    const snapshot = { ...previous, version, dialect, id: input.id, prevId, tables, views: previous?.['views'] ?? {}, enums: previous?.['enums'] ?? {}, _meta: { schemas: {}, tables: {}, columns: {} }, internal: previous?.['internal'] ?? { indexes: {} } };
    return `${JSON.stringify(snapshot, null, 2)}\n`;
  }
  const snapshot = { views: {}, internal: { tables: {}, indexes: {} }, ...previous, version, dialect, id: input.id, prevId, tables, _meta: { schemas: {}, tables: {}, columns: {} } };
  return `${JSON.stringify(snapshot, null, 2)}\n`;
}

/** A column default as drizzle-kit records it: SQL text, or a number for an integer literal. */
function defaultOf(column: DdlColumn, dialect: DrizzleDialect): { default?: string | number } {
  const value = column.default;
  if (value === undefined) return {};
  if (/^-?\d+$/.test(value)) return { default: Number(value) };
  if (/^now\(\)$/i.test(value)) return { default: dialect === 'postgresql' ? 'now()' : '(now())' };
  return { default: value };
}

const primaryKeyName = (table: DdlTable) => `${table.name}_${table.primaryKey.columns.join('_')}_pk`;

function foreignKeys(table: DdlTable): Json {
  return Object.fromEntries(
    table.foreignKeys.map((foreign) => {
      const name = foreign.name ?? `${table.name}_${foreign.columns.join('_')}_${foreign.table}_${foreign.references.join('_')}_fk`;
      return [name, { name, tableFrom: table.name, tableTo: foreign.table, columnsFrom: foreign.columns, columnsTo: foreign.references, onDelete: (foreign.onDelete ?? 'NO ACTION').toLowerCase(), onUpdate: 'no action' }];
    }),
  );
}

function pgTable(table: DdlTable): Json {
  const columns = Object.fromEntries(
    table.columns.map((column) => [column.name, { name: column.name, type: column.type === 'timestamptz' ? 'timestamp with time zone' : column.type, primaryKey: false, notNull: column.notNull, ...defaultOf(column, 'postgresql') }]),
  );
  const indexes = Object.fromEntries(
    table.indexes.map((index) => [
      index.name,
      {
        name: index.name,
        columns: index.columns.map((expression) => ({ expression, isExpression: false, asc: true, nulls: 'last' })),
        isUnique: false,
        ...(index.where ? { where: index.where } : {}),
        concurrently: false,
        method: 'btree',
        with: {},
      },
    ]),
  );
  const pk = table.primaryKey.name ?? primaryKeyName(table);
  return {
    name: table.name,
    schema: '',
    columns,
    indexes,
    foreignKeys: foreignKeys(table),
    compositePrimaryKeys: table.primaryKey.columns.length > 0 ? { [pk]: { name: pk, columns: table.primaryKey.columns } } : {},
    uniqueConstraints: {},
    policies: {},
    checkConstraints: {},
    isRLSEnabled: false,
  };
}

/** Columns as drizzle-kit records them for the dialects that mark autoincrement (SQLite, MySQL). */
function autoincrementColumns(table: DdlTable, dialect: 'sqlite' | 'mysql'): Json {
  return Object.fromEntries(table.columns.map((column) => [column.name, { name: column.name, type: column.type, primaryKey: false, notNull: column.notNull, autoincrement: false, ...defaultOf(column, dialect) }]));
}

/** SQLite as drizzle-kit 0.31 records it: unnamed composite keys get derived names, a partial index keeps its WHERE text. */
function sqliteTable(table: DdlTable): Json {
  const columns = autoincrementColumns(table, 'sqlite');
  const indexes = Object.fromEntries(table.indexes.map((index) => [index.name, { name: index.name, columns: index.columns, isUnique: false, ...(index.where ? { where: index.where } : {}) }]));
  const pk = primaryKeyName(table);
  return {
    name: table.name,
    columns,
    indexes,
    foreignKeys: foreignKeys(table),
    compositePrimaryKeys: table.primaryKey.columns.length > 0 ? { [pk]: { columns: table.primaryKey.columns, name: pk } } : {},
    uniqueConstraints: {},
    checkConstraints: {},
  };
}

function mysqlTable(table: DdlTable): Json {
  const columns = autoincrementColumns(table, 'mysql');
  const indexes = Object.fromEntries(table.indexes.map((index) => [index.name, { name: index.name, columns: index.columns, isUnique: false }]));
  // The schema module names no MySQL primary key (MySQL calls every one PRIMARY), so drizzle-kit derives the name.
  const pk = primaryKeyName(table);
  return {
    name: table.name,
    columns,
    indexes,
    foreignKeys: foreignKeys(table),
    compositePrimaryKeys: table.primaryKey.columns.length > 0 ? { [pk]: { name: pk, columns: table.primaryKey.columns } } : {},
    uniqueConstraints: {},
    checkConstraint: {},
  };
}
