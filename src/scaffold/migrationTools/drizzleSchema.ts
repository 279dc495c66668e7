import type * as TsMorph from 'ts-morph';
import { loadTypeScript } from '../javascript/transpile.js';
import type { DdlColumn, DdlTable } from './ddlTables.js';

type Ts = typeof TsMorph.ts;
type Expression = TsMorph.ts.Expression;
export type DrizzleDialect = 'postgresql' | 'mysql' | 'sqlite';

const CORE: Record<DrizzleDialect, { module: string; table: string }> = {
  postgresql: { module: 'drizzle-orm/pg-core', table: 'pgTable' },
  mysql: { module: 'drizzle-orm/mysql-core', table: 'mysqlTable' },
  sqlite: { module: 'drizzle-orm/sqlite-core', table: 'sqliteTable' },
};

const camel = (name: string) => name.replace(/[^A-Za-z0-9]+(.)/g, (_match, next: string) => next.toUpperCase()).replace(/^[^A-Za-z_$]+/, '');

/**
 * A Drizzle schema module declaring the store's tables (pgTable / mysqlTable / sqliteTable) with the DDL's columns, defaults,
 * keys and indexes, printed through TypeScript's factory: every name and default from the DDL is a string literal.
 * drizzle-kit then sees the tables it already has in the migration and generates nothing for them.
 */
export function renderDrizzleSchema(tables: readonly DdlTable[], dialect: DrizzleDialect, sequences: readonly string[], objectConfig = false): string {
  const ts = loadTypeScript();
  const f = ts.factory;
  const core = CORE[dialect].module;
  const used = new Set<string>([CORE[dialect].table, 'primaryKey']);
  const custom = new Set<string>();
  let needsSql = false;
  const id = (name: string) => f.createIdentifier(name);
  const str = (text: string) => f.createStringLiteral(text, true);
  const call = (callee: Expression, args: Expression[] = []) => f.createCallExpression(callee, undefined, args);
  const method = (target: Expression, name: string, args: Expression[] = []) => call(f.createPropertyAccessExpression(target, name), args);
  const object = (entries: Array<[string, Expression]>) => f.createObjectLiteralExpression(entries.map(([key, value]) => f.createPropertyAssignment(/^[A-Za-z_$][\w$]*$/.test(key) ? key : str(key), value)), false);
  const raw = (text: string) => {
    needsSql = true;
    return method(id('sql'), 'raw', [str(text)]);
  };
  const builder = (fn: string, column: string, options?: Array<[string, Expression]>) => {
    if (!custom.has(fn)) used.add(fn);
    return call(id(fn), [str(column), ...(options ? [object(options)] : [])]);
  };

  const columnExpression = (column: DdlColumn): Expression => {
    let expression = columnBuilder(column);
    if (column.notNull) expression = method(expression, 'notNull');
    const value = column.default;
    if (value !== undefined) {
      if (/^'.*'$/.test(value)) expression = method(expression, 'default', [str(value.slice(1, -1))]);
      else if (/^-?\d+$/.test(value)) expression = method(expression, 'default', [f.createNumericLiteral(value)]);
      else if (/^now\(\)$/i.test(value)) expression = method(expression, 'defaultNow');
      else expression = method(expression, 'default', [raw(value)]);
    }
    return expression;
  };

  function columnBuilder(column: DdlColumn): Expression {
    const [, base, size] = /^(\w+)(?:\((\d+)\))?$/.exec(column.type) ?? [];
    const length = (): Array<[string, Expression]> => [['length', f.createNumericLiteral(Number(size))]];
    // SQLite's own blob column holds a Buffer; the other dialects have none for their binary types.
    if (base === 'blob' && dialect === 'sqlite') return builder('blob', column.name, [['mode', str('buffer')]]);
    switch (base) {
      case 'varchar':
      case 'char':
        return builder(base, column.name, length());
      case 'text':
      case 'mediumtext':
      case 'longtext':
      case 'smallint':
      case 'integer':
      case 'int':
      case 'tinyint':
      case 'jsonb':
      case 'json':
        return builder(base, column.name);
      case 'bigint':
        return builder('bigint', column.name, [['mode', str('bigint')]]);
      case 'timestamptz':
        return builder('timestamp', column.name, [['withTimezone', f.createTrue()]]);
      case 'datetime':
        return builder('datetime', column.name, size ? [['fsp', f.createNumericLiteral(Number(size))]] : undefined);
      case 'bytea':
      case 'blob':
      case 'mediumblob':
      case 'longblob':
        // Drizzle has no binary column for these: a customType names the SQL type, the value is a Buffer.
        custom.add(base);
        used.add('customType');
        return builder(base, column.name);
      default:
        throw new Error(`bug: no Drizzle column for the store column ${column.name} ${column.type}`);
    }
  }

  const statements: TsMorph.ts.Statement[] = [];
  const exported = [f.createModifier(ts.SyntaxKind.ExportKeyword)];
  const constant = (name: string, initializer: Expression, modifiers = exported) =>
    f.createVariableStatement(modifiers, f.createVariableDeclarationList([f.createVariableDeclaration(name, undefined, undefined, initializer)], ts.NodeFlags.Const));
  for (const sequence of dialect === 'postgresql' ? sequences : []) {
    used.add('pgSequence');
    statements.push(constant(camel(sequence), call(id('pgSequence'), [str(sequence)])));
  }
  for (const table of tables) {
    const columns = table.columns.map((column): [string, Expression] => [camel(column.name), columnExpression(column)]);
    const ref = (owner: string, column: string) => f.createPropertyAccessExpression(id(owner), camel(column));
    // Keyed by the constraint's name for drizzle-orm before 0.36, whose extra config is an object, not an array.
    const extras: Array<[string, Expression]> = [];
    const idEntries: Array<[string, Expression]> = [['columns', f.createArrayLiteralExpression(table.primaryKey.columns.map((column) => ref('table', column)))]];
    if (table.primaryKey.name && dialect === 'postgresql') idEntries.unshift(['name', str(table.primaryKey.name)]);
    extras.push([camel(table.primaryKey.name ?? `${table.name}_pkey`), call(id('primaryKey'), [object(idEntries)])]);
    for (const index of table.indexes) {
      used.add('index');
      let expression = method(call(id('index'), [str(index.name)]), 'on', index.columns.map((column) => ref('table', column)));
      if (index.where) expression = method(expression, 'where', [raw(index.where)]);
      extras.push([camel(index.name), expression]);
    }
    for (const foreign of table.foreignKeys) {
      used.add('foreignKey');
      const entries: Array<[string, Expression]> = [
        ['columns', f.createArrayLiteralExpression(foreign.columns.map((column) => ref('table', column)))],
        ['foreignColumns', f.createArrayLiteralExpression(foreign.references.map((column) => ref(camel(foreign.table), column)))],
      ];
      if (foreign.name) entries.unshift(['name', str(foreign.name)]);
      let expression: Expression = call(id('foreignKey'), [object(entries)]);
      if (foreign.onDelete) expression = method(expression, 'onDelete', [str(foreign.onDelete.toLowerCase())]);
      extras.push([camel(foreign.name ?? `${table.name}_${foreign.table}_fkey`), expression]);
    }
    const config = objectConfig
      ? f.createParenthesizedExpression(f.createObjectLiteralExpression(extras.map(([key, value]) => f.createPropertyAssignment(key, value)), true))
      : f.createArrayLiteralExpression(extras.map(([, value]) => value), true);
    const extra = f.createArrowFunction(undefined, undefined, [f.createParameterDeclaration(undefined, undefined, 'table')], undefined, f.createToken(ts.SyntaxKind.EqualsGreaterThanToken), config);
    statements.push(constant(camel(table.name), call(id(CORE[dialect].table), [str(table.name), f.createObjectLiteralExpression(columns.map(([key, value]) => f.createPropertyAssignment(key, value)), true), extra])));
  }
  const customs = [...custom].sort().map((sqlType) =>
    constant(
      sqlType,
      f.createCallExpression(id('customType'), [f.createTypeLiteralNode([f.createPropertySignature(undefined, 'data', undefined, f.createTypeReferenceNode('Buffer'))])], [
        object([['dataType', f.createArrowFunction(undefined, undefined, [], undefined, f.createToken(ts.SyntaxKind.EqualsGreaterThanToken), str(sqlType))]]),
      ]),
      [],
    ),
  );
  const imports = [
    ...(needsSql ? [importOf(ts, ['sql'], 'drizzle-orm')] : []),
    importOf(
      ts,
      [...used].filter((name) => !custom.has(name)).sort(),
      core,
    ),
  ];
  const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });
  const file = ts.createSourceFile('idempotency.ts', '', ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const print = (node: TsMorph.ts.Node) => printer.printNode(ts.EmitHint.Unspecified, node, file);
  const header = '// Generated by idempotency-builder: the idempotency store, the same tables as its SQL migration.\n';
  return `${header}${imports.map(print).join('\n')}\n\n${[...customs, ...statements].map(print).join('\n\n')}\n`;
}

function importOf(ts: Ts, names: string[], from: string): TsMorph.ts.ImportDeclaration {
  const f = ts.factory;
  return f.createImportDeclaration(undefined, f.createImportClause(false, undefined, f.createNamedImports(names.map((name) => f.createImportSpecifier(false, undefined, f.createIdentifier(name))))), f.createStringLiteral(from, true));
}

/** The CREATE SEQUENCE names of the DDL (the PostgreSQL store's fencing counter). */
export function ddlSequences(ddl: string): string[] {
  return [...ddl.replace(/--[^\n]*/g, '').matchAll(/CREATE SEQUENCE IF NOT EXISTS\s+([\w.]+)/g)].map((match) => match[1]!);
}
