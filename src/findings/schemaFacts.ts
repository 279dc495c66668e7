import { ts } from 'ts-morph';
import { mongooseModel } from './documentStore.js';

/**
 * What the database enforces, read from the project's schema files: which column sets are unique per table. A
 * read-then-create race is harmless when the database rejects the second insert.
 */
export interface SchemaFacts {
  /** normalised table or model name → unique column sets (each normalised, sorted, joined by ','). */
  unique: ReadonlyMap<string, ReadonlySet<string>>;
  /** Where each table's facts came from, for evidence in messages. */
  sources: ReadonlyMap<string, string>;
}

/** `stripe_customer_id`, `stripeCustomerId` and `"StripeCustomerId"` are the same column to us. */
export function normaliseName(name: string): string {
  return name.replace(/["'`[\]]/g, '').replace(/_/g, '').toLowerCase();
}

export function isUnique(schema: SchemaFacts, table: string, columns: readonly string[]): boolean {
  const sets = schema.unique.get(normaliseName(table)) ?? schema.unique.get(normaliseName(table).replace(/s$/, ''));
  if (!sets || !columns.length) return false;
  const wanted = new Set(columns.map(normaliseName));
  // Equality on a superset of a unique set still finds at most one row, and the database rejects its duplicate.
  return [...sets].some((set) => set.split(',').every((c) => wanted.has(c)));
}

/** Source files that declare tables in code (Drizzle, TypeORM entities) and so are read as schema too. */
export const SCHEMA_IN_CODE = /pgTable|mysqlTable|sqliteTable|@Entity\(|\bDataTypes\.\w+|\bnew\s+(?:mongoose\.)?Schema\b/;

export function readSchemaFacts(files: ReadonlyMap<string, string>): SchemaFacts {
  const unique = new Map<string, Set<string>>();
  const sources = new Map<string, string>();
  const add = (table: string, columns: string[], file: string): void => {
    const key = normaliseName(table);
    const set = unique.get(key) ?? new Set<string>();
    set.add(columns.map(normaliseName).sort().join(','));
    unique.set(key, set);
    if (!sources.has(key)) sources.set(key, file);
  };
  for (const [file, text] of files) {
    if (file.endsWith('.prisma')) readPrisma(text, (t, c) => add(t, c, file));
    else if (file.endsWith('.sql')) readSql(text, (t, c) => add(t, c, file));
    else if (/pgTable|mysqlTable|sqliteTable/.test(text)) readDrizzle(text, (t, c) => add(t, c, file));
    else if (/@Entity\(/.test(text)) readTypeorm(text, (t, c) => add(t, c, file));
    else if (/\bDataTypes\.\w+/.test(text)) readSequelize(text, (t, c) => add(t, c, file));
    else if (/\bnew\s+(?:mongoose\.)?Schema\b/.test(text)) readMongoose(text, (t, c) => add(t, c, file));
  }
  return { unique, sources };
}

function readPrisma(text: string, add: (table: string, columns: string[]) => void): void {
  for (const model of text.matchAll(/model\s+(\w+)\s*\{([^}]*)\}/g)) {
    const [, name = '', body = ''] = model;
    const mapped = /@@map\(\s*"([^"]+)"/.exec(body)?.[1];
    const tables = mapped ? [name, mapped] : [name];
    for (const line of body.split('\n')) {
      const field = /^\s*(\w+)\s+\w+.*@(unique|id)\b/.exec(line)?.[1];
      if (field) for (const t of tables) add(t, [field]);
      const block = /@@(unique|id)\(\s*(?:fields:\s*)?\[([^\]]+)\]/.exec(line)?.[2];
      if (block) for (const t of tables) add(t, block.split(',').map((s) => s.trim().replace(/\(.*$/, '')));
    }
  }
}

function readSql(text: string, add: (table: string, columns: string[]) => void): void {
  const sql = text.replace(/--.*$/gm, '');
  for (const m of sql.matchAll(/create\s+table\s+(?:if\s+not\s+exists\s+)?([\w."]+)\s*\(([\s\S]*?)\)\s*;/gi)) {
    const table = (m[1] ?? '').split('.').pop() ?? '';
    for (const part of splitTopLevel(m[2] ?? '')) {
      const constraint = /^(?:constraint\s+\S+\s+)?(unique|primary\s+key)\s*\(([^)]+)\)/i.exec(part.trim());
      if (constraint) add(table, (constraint[2] ?? '').split(',').map((c) => c.trim()));
      else if (/\b(unique|primary\s+key)\b/i.test(part)) add(table, [part.trim().split(/\s+/)[0] ?? '']);
    }
  }
  for (const m of sql.matchAll(/create\s+unique\s+index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?\S*\s+on\s+(?:only\s+)?([\w."]+)\s*(?:using\s+\w+\s*)?\(([^)]+)\)/gi)) {
    add((m[1] ?? '').split('.').pop() ?? '', (m[2] ?? '').split(',').map((c) => c.trim().split(/\s+/)[0] ?? ''));
  }
  for (const m of sql.matchAll(/alter\s+table\s+(?:only\s+)?([\w."]+)[\s\S]*?add\s+(?:constraint\s+\S+\s+)?(unique|primary\s+key)\s*\(([^)]+)\)/gi)) {
    add((m[1] ?? '').split('.').pop() ?? '', (m[3] ?? '').split(',').map((c) => c.trim()));
  }
}

/** Drizzle: `email: text('email').notNull().unique()` inside `pgTable('users', { … })`. */
function readDrizzle(text: string, add: (table: string, columns: string[]) => void): void {
  for (const m of text.matchAll(/(?:pg|mysql|sqlite)Table\(\s*['"](\w+)['"]\s*,\s*\{([\s\S]*?)\n\s*\}/g)) {
    for (const col of (m[2] ?? '').matchAll(/(\w+)\s*:\s*\w+\([^)]*\)[^,\n]*\.(unique|primaryKey)\(/g)) {
      add(m[1] ?? '', [col[1] ?? '']);
    }
  }
}

/**
 * TypeORM entities: `@PrimaryGeneratedColumn() id`, `@Column({ unique: true }) email`, `@Index({ unique: true })` on a
 * property, and `@Unique(['a', 'b'])` / `@Index(['a', 'b'], { unique: true })` on the class; the table is the class
 * name and the name given to `@Entity('users')` / `@Entity({ name: 'users' })`.
 */
function readTypeorm(text: string, add: (table: string, columns: string[]) => void): void {
  const entities = [...text.matchAll(/@Entity\(\s*(?:['"](\w+)['"]|\{[^}]*?\bname\s*:\s*['"](\w+)['"][^}]*\})?[^)]*\)[\s\S]*?\bclass\s+(\w+)/g)];
  entities.forEach((entity, index) => {
    const tables = [entity[3] ?? '', entity[1] ?? entity[2] ?? ''].filter(Boolean);
    const start = entity.index ?? 0;
    const body = text.slice(start, entities[index + 1]?.index ?? text.length);
    const addAll = (columns: string[]) => tables.forEach((table) => add(table, columns));
    for (const m of body.matchAll(/@(Unique|Index)\(\s*(?:['"]\w+['"]\s*,\s*)?\[([^\]]*)\]([^)]*)\)/g)) {
      if (m[1] === 'Index' && !/unique\s*:\s*true/.test(m[3] ?? '')) continue;
      const columns = [...(m[2] ?? '').matchAll(/['"](\w+)['"]/g)].map((c) => c[1] ?? '');
      if (columns.length > 0) addAll(columns);
    }
    for (const m of body.matchAll(/@(Column|PrimaryGeneratedColumn|PrimaryColumn|Index)\(([^)]*)\)\s*(?:@\w+\([^)]*\)\s*)*(?:(?:public|private|protected|readonly|declare)\s+)*(\w+)\s*[!?]?\s*:/g)) {
      const [, decorator = '', args = '', property = ''] = m;
      const unique = decorator.startsWith('Primary') || (/unique\s*:\s*true/.test(args) && !/^\s*\[/.test(args));
      if (unique) addAll([property]);
    }
  });
}

/**
 * Sequelize models: `Usuario.init({ email: { type: DataTypes.STRING, unique: true } }, …)` or
 * `sequelize.define('Usuario', { … })`; a column with `unique: true` or `primaryKey: true` is unique (a named
 * `unique: 'idx'` is a composite: not read). Parsed, not matched: column options nest (`validate: { … }`).
 */
function readSequelize(text: string, add: (table: string, columns: string[]) => void): void {
  const sf = ts.createSourceFile('model.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const owner = node.expression.expression;
      const [first, second] = node.arguments;
      const model = method === 'init' && ts.isIdentifier(owner) ? { table: owner.text, columns: first } : method === 'define' && first && ts.isStringLiteral(first) ? { table: first.text, columns: second } : undefined;
      if (model?.columns && ts.isObjectLiteralExpression(model.columns)) {
        for (const column of model.columns.properties) {
          if (!ts.isPropertyAssignment(column) || !ts.isObjectLiteralExpression(column.initializer)) continue;
          const name = ts.isIdentifier(column.name) || ts.isStringLiteral(column.name) ? column.name.text : undefined;
          const unique = column.initializer.properties.some((p) => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && /^(unique|primaryKey)$/.test(p.name.text) && p.initializer.kind === ts.SyntaxKind.TrueKeyword);
          if (name && unique) add(model.table, [name]);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

/**
 * Mongoose schemas: `new Schema({ email: { type: String, unique: true } })` and `schema.index({ teamId: 1, email: 1 },
 * { unique: true })`, for the model `mongoose.model('User', schema)` makes of it (under that name and the variable's);
 * `_id` is unique in every collection.
 */
function readMongoose(text: string, add: (table: string, columns: string[]) => void): void {
  const sf = ts.createSourceFile('model.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const sets = new Map<string, string[][]>();
  const models: Array<{ names: string[]; schema: string }> = [];
  const isTrue = (node: ts.ObjectLiteralExpression, name: string) => node.properties.some((p) => ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name && p.initializer.kind === ts.SyntaxKind.TrueKeyword);
  const keyOf = (name: ts.PropertyName) => (ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined);
  const uniqueFields = (init: ts.Expression): string[][] | undefined => {
    const [fields] = ts.isNewExpression(init) && /^(mongoose\.)?Schema$/.test(init.expression.getText(sf)) ? (init.arguments ?? []) : [];
    if (!fields || !ts.isObjectLiteralExpression(fields)) return undefined;
    const found: string[][] = [['_id']];
    for (const p of fields.properties) {
      const name = ts.isPropertyAssignment(p) ? keyOf(p.name) : undefined;
      if (name && ts.isPropertyAssignment(p) && ts.isObjectLiteralExpression(p.initializer) && isTrue(p.initializer, 'unique')) found.push([name]);
    }
    return found;
  };
  const visit = (node: ts.Node): void => {
    const declared = ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer ? uniqueFields(node.initializer) : undefined;
    if (declared && ts.isVariableDeclaration(node)) sets.set(node.name.getText(sf), declared);
    // `const User = mongoose.model('User', schema)`, `export default model<IUser>('User', schema)`, a connection's
    // `db.model('User', schema)`, the schema inline. Only a schema read above (or inline) counts.
    const model = ts.isCallExpression(node) ? mongooseModel(node) : undefined;
    if (model) {
      const { schema } = model;
      const variable = ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name) ? [node.parent.name.text] : [];
      const names = [...variable, ...(model.name !== undefined ? [model.name] : [])];
      const inline = schema && uniqueFields(schema);
      if (inline) {
        const name = `\u0000${models.length}`;
        sets.set(name, inline);
        models.push({ names, schema: name });
      } else if (schema && ts.isIdentifier(schema)) models.push({ names, schema: schema.text });
    }
    // `schema.index({ a: 1, b: 1 }, { unique: true })`
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'index' && ts.isIdentifier(node.expression.expression)) {
      const [keys, options] = node.arguments;
      if (keys && ts.isObjectLiteralExpression(keys) && options && ts.isObjectLiteralExpression(options) && isTrue(options, 'unique')) {
        const columns = keys.properties.flatMap((p) => (ts.isPropertyAssignment(p) ? (keyOf(p.name) ?? []) : []));
        const list = sets.get(node.expression.expression.text) ?? [];
        list.push(columns);
        sets.set(node.expression.expression.text, list);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  for (const model of models) for (const columns of sets.get(model.schema) ?? []) for (const name of model.names) add(name, columns);
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of body) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current);
  return parts;
}
