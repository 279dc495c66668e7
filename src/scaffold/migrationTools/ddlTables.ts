/** One column of a table in the store's DDL, as written there. */
export interface DdlColumn {
  name: string;
  /** Lower-case type without character set clauses: `varchar(255)`, `timestamptz`, `datetime(3)`. */
  type: string;
  notNull: boolean;
  /** The DEFAULT expression as written (`'PROCESSING'`, `1`, `now()`, `nextval('x_seq')`). */
  default?: string;
}

export interface DdlIndex {
  name: string;
  columns: string[];
  /** A partial index's predicate, as written. */
  where?: string;
}

export interface DdlTable {
  name: string;
  columns: DdlColumn[];
  primaryKey: { name?: string; columns: string[] };
  indexes: DdlIndex[];
  foreignKeys: Array<{ name?: string; columns: string[]; table: string; references: string[]; onDelete?: string }>;
}

const unquote = (name: string) => name.replace(/^[`"]|[`"]$/g, '');
const columnList = (text: string) => text.split(',').map((part) => unquote(part.trim()));

/**
 * The tables of the store's own DDL (the PostgreSQL, MySQL and SQLite migrations the stores write), so a Prisma model or a
 * Drizzle table is derived from the one source and cannot drift from it. Only the shapes those files use are read.
 */
export function ddlTables(ddl: string): DdlTable[] {
  const sql = ddl.replace(/--[^\n]*/g, '');
  const tables: DdlTable[] = [];
  for (const match of sql.matchAll(/CREATE TABLE IF NOT EXISTS\s+([`"]?[\w.]+[`"]?)\s*\(([\s\S]*?)\n\)/g)) {
    const table: DdlTable = { name: unquote(match[1]!), columns: [], primaryKey: { columns: [] }, indexes: [], foreignKeys: [] };
    for (const raw of splitTopLevel(match[2]!)) {
      const line = raw.trim().replace(/\s+/g, ' ');
      if (line === '') continue;
      const primary = /^(?:CONSTRAINT ([`"]?\w+[`"]?) )?PRIMARY KEY \(([^)]*)\)$/i.exec(line);
      const key = /^KEY ([`"]?\w+[`"]?) \(([^)]*)\)$/i.exec(line);
      const foreign = /^(?:CONSTRAINT ([`"]?\w+[`"]?) )?FOREIGN KEY \(([^)]*)\) REFERENCES ([`"]?[\w.]+[`"]?) \(([^)]*)\)(?: ON DELETE (CASCADE|SET NULL|RESTRICT|NO ACTION))?$/i.exec(line);
      if (primary) table.primaryKey = { ...(primary[1] ? { name: unquote(primary[1]) } : {}), columns: columnList(primary[2]!) };
      else if (key) table.indexes.push({ name: unquote(key[1]!), columns: columnList(key[2]!) });
      else if (foreign) table.foreignKeys.push({ ...(foreign[1] ? { name: unquote(foreign[1]) } : {}), columns: columnList(foreign[2]!), table: unquote(foreign[3]!), references: columnList(foreign[4]!), ...(foreign[5] ? { onDelete: foreign[5].toUpperCase() } : {}) });
      else if (/^(CONSTRAINT|CHECK) /i.test(line)) continue; // CHECK constraints: the database enforces them, the ORMs do not model them
      else {
        const column = /^([`"]?\w+[`"]?) (\w+(?:\(\d+\))?)(.*)$/.exec(line);
        if (!column) throw new Error(`bug: unreadable line in the store's DDL: ${line}`);
        const rest = column[3]!.replace(/\s+(?:CHARACTER SET|COLLATE) \w+/gi, '');
        const fallback = /\bDEFAULT ((?:'[^']*'|[\w]+(?:\([^)]*\))?))/i.exec(rest)?.[1];
        table.columns.push({ name: unquote(column[1]!), type: column[2]!.toLowerCase(), notNull: /\bNOT NULL\b/i.test(rest), ...(fallback ? { default: fallback } : {}) });
      }
    }
    tables.push(table);
  }
  for (const match of sql.matchAll(/CREATE INDEX IF NOT EXISTS\s+([`"]?\w+[`"]?)\s+ON\s+([`"]?[\w.]+[`"]?)\s*\(([^)]*)\)(?:\s+WHERE\s+([^;]+))?;/g)) {
    const where = match[4]?.trim();
    tables.find((table) => table.name === unquote(match[2]!))?.indexes.push({ name: unquote(match[1]!), columns: columnList(match[3]!), ...(where ? { where } : {}) });
  }
  return tables;
}

/** Splits a table body at commas outside parentheses (CHECK (a IN ('x', 'y')) stays one item). */
function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (char === "'") quoted = !quoted;
    else if (!quoted && char === '(') depth++;
    else if (!quoted && char === ')') depth--;
    else if (!quoted && depth === 0 && char === ',') {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}
