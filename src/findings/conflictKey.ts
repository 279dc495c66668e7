import { ts } from 'ts-morph';
import { objectProperty, propertyName, stringValue, unwrap } from '../inspect/parse/astHelpers.js';
import { perAttemptValue } from './volatile.js';
import { calls, innermostFunction } from './walk.js';

/**
 * What an atomic claim (an upsert, `ON CONFLICT DO NOTHING`, `INSERT IGNORE`, `SET NX`) is keyed on, judged only as
 * far as the code says: a key made fresh on each attempt (`randomUUID()`, `Date.now()`) never conflicts, so a
 * redelivery inserts again and the "dedupe" never fires. Whenever the code does not tell which value is the conflict
 * key, the answer is undefined and callers keep crediting the claim: no alarm on a guess.
 */
export interface PerAttemptKey {
  /** The fresh value as written: `randomUUID()`, `new Date()`, `gen_random_uuid()`. */
  value: string;
  /** The claim in the words a message uses: `ON CONFLICT`, `INSERT IGNORE`, `upsert`, `SET NX`. */
  claim: string;
}

/** One value of the claim's key: fresh per attempt (with its name), or anything else (stable or unknown). */
type Slot = string | undefined;

/**
 * `key`: the stated conflict target's values; fresh when any of them is (the tuple then never repeats).
 * `all`: no target stated, any unique column may reject the row; fresh only when every value is.
 */
interface ClaimKey {
  mode: 'key' | 'all';
  slots: Slot[];
  claim: string;
}

function verdict(key: ClaimKey | undefined): PerAttemptKey | undefined {
  if (!key || key.slots.length === 0) return undefined;
  const fresh = key.mode === 'key' ? key.slots.find((s) => s !== undefined) : key.slots.every((s) => s !== undefined) ? key.slots[0] : undefined;
  return fresh ? { value: fresh, claim: key.claim } : undefined;
}

/** A claim written in SQL, passed to `call` (`db.query(sql, params)`, `` sql`…` ``), keyed on a fresh value. */
export function perAttemptSqlKey(call: ts.CallExpression | ts.TaggedTemplateExpression, options: { unique?: boolean } = {}): PerAttemptKey | undefined {
  if (ts.isTaggedTemplateExpression(call)) return verdict(sqlKey(templateSql(call.template), (i) => templateValues(call.template)[i], () => undefined, options));
  for (let i = 0; i < call.arguments.length; i++) {
    const found = sqlInArgument(call, i, options);
    if (found) return found;
  }
  return undefined;
}

function sqlInArgument(call: ts.CallExpression, index: number, options: { unique?: boolean }): PerAttemptKey | undefined {
  let arg = unwrap(call.arguments[index]!);
  if (ts.isIdentifier(arg)) arg = constString(arg) ?? arg;
  // pg's `client.query({ text, values })`.
  const params = (): ts.Expression[] | undefined => {
    const object = ts.isObjectLiteralExpression(arg) ? arg : undefined;
    if (object) return arrayOf(objectProperty(object, 'values'));
    // Prisma's `$executeRawUnsafe(sql, a, b)` takes the values as arguments.
    const method = ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : '';
    if (/Unsafe$/.test(method)) return call.arguments.slice(index + 1).some(ts.isSpreadElement) ? undefined : [...call.arguments.slice(index + 1)];
    const next = call.arguments[index + 1];
    const options = next ? unwrap(next) : undefined;
    // Sequelize's `query(sql, { bind: [...] })` / `{ replacements: [...] }`.
    if (options && ts.isObjectLiteralExpression(options)) return arrayOf(objectProperty(options, 'bind') ?? objectProperty(options, 'replacements'));
    return arrayOf(next);
  };
  const textNode = ts.isObjectLiteralExpression(arg) ? unwrap(objectProperty(arg, 'text') ?? objectProperty(arg, 'sql') ?? arg) : arg;
  if (ts.isTemplateExpression(textNode)) return verdict(sqlKey(templateSql(textNode), (i) => templateValues(textNode)[i], params, options));
  const text = stringValue(textNode);
  return text === undefined ? undefined : verdict(sqlKey(text, () => undefined, params, options));
}

/** `` `… ${a} … ${b}` `` as SQL with each interpolation marked by its index. */
function templateSql(template: ts.TemplateLiteral): string {
  if (ts.isNoSubstitutionTemplateLiteral(template)) return template.text;
  return template.head.text + template.templateSpans.map((span, i) => `__interpolated_${i}__${span.literal.text}`).join('');
}

function templateValues(template: ts.TemplateLiteral): ts.Expression[] {
  return ts.isNoSubstitutionTemplateLiteral(template) ? [] : template.templateSpans.map((span) => span.expression);
}

/** Postgres and MySQL functions that give a new value on every statement. */
const SQL_FRESH = /^(gen_random_uuid|uuid_generate_v[14]|uuid|newid|random|rand|now|clock_timestamp|sysdate|current_timestamp|localtimestamp|utc_timestamp)\s*(\(\s*\))?$/i;
const INSERT_VALUES = /\binsert\s+(?:ignore\s+)?into\s+[\w."`]+\s*(?:\(([^)]*)\))?\s*values\s*\(/i;
const CONFLICT = /\bon\s+conflict\b\s*(on\s+constraint\b|\(([^)]*)\))?/i;

function sqlKey(sql: string, interpolated: (index: number) => ts.Expression | undefined, params: () => ts.Expression[] | undefined, options: { unique?: boolean }): ClaimKey | undefined {
  const insert = INSERT_VALUES.exec(sql);
  if (!insert) return undefined;
  const conflict = CONFLICT.exec(sql);
  const claim = conflict ? 'ON CONFLICT' : /\binsert\s+ignore\b/i.test(sql) ? 'INSERT IGNORE' : /\bon\s+duplicate\s+key\b/i.test(sql) ? 'ON DUPLICATE KEY' : options.unique ? 'insert' : undefined;
  if (!claim || conflict?.[1]?.toLowerCase().startsWith('on')) return undefined;
  const tuple = splitTuple(sql, insert.index + insert[0].length);
  // Several rows, or an expression we cannot split: which value is the key is not known.
  if (!tuple || /^\s*,\s*\(/.test(sql.slice(tuple.end + 1))) return undefined;
  const values = params();
  let ordinal = [...sql.slice(0, insert.index + insert[0].length).matchAll(/\?/g)].length;
  const slots = tuple.items.map((item): { slot: Slot; known: boolean } => {
    const text = item.replace(/::[\w ]+(\[\])?$/, '').replace(/^cast\s*\(\s*([\s\S]*?)\s+as\s+[\w ]+\)$/i, '$1').trim();
    const questions = [...item.matchAll(/\?/g)].length;
    const at = ordinal;
    ordinal += questions;
    const marker = /^__interpolated_(\d+)__$/.exec(text);
    const dollar = /^\$(\d+)$/.exec(text);
    const expr = marker ? interpolated(Number(marker[1])) : dollar ? values?.[Number(dollar[1]) - 1] : text === '?' ? values?.[at] : undefined;
    if (expr) return { slot: ts.isSpreadElement(expr) ? undefined : perAttemptValue(expr), known: true };
    if (SQL_FRESH.test(text)) return { slot: text.replace(/\s*\(\s*\)$/, '()'), known: true };
    return { slot: undefined, known: false };
  });
  const target = conflict?.[2];
  if (target === undefined) return { mode: 'all', slots: slots.map((s) => s.slot), claim };
  const columns = insert[1]?.split(',').map(columnName);
  const keys = target.split(',').map(columnName);
  if (!columns || columns.length !== slots.length || keys.some((k) => k === undefined)) return undefined;
  return { mode: 'key', slots: keys.map((k) => (columns.indexOf(k) >= 0 ? slots[columns.indexOf(k)]!.slot : undefined)), claim };
}

function columnName(text: string): string | undefined {
  const m = /^\s*["`]?([A-Za-z_]\w*)["`]?\s*$/.exec(text);
  return m ? m[1]!.toLowerCase() : undefined;
}

/** The comma-separated items of the parenthesised list opened just before `start`, and where it closes. */
function splitTuple(sql: string, start: number): { items: string[]; end: number } | undefined {
  const items: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = '';
  for (let i = start; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) return { items: [...items, current.trim()], end: i };
      depth--;
    } else if (c === ',' && depth === 0) {
      items.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  return undefined;
}

/**
 * A claim made through a client or ORM call, at the outermost call of its chain: Prisma `upsert({ where })` (and
 * `create({ data })` when a unique violation is caught), Drizzle `.values(…).onConflictDoNothing({ target })`, Knex
 * `.insert(…).onConflict(cols)`, Supabase / TypeORM / Sequelize `upsert(values, conflict)`, TypeORM `.orIgnore()`,
 * MongoDB `updateOne(filter, …, { upsert: true })`, Redis `SET NX`, `SETNX`, `SADD`, `HSETNX`.
 */
export function perAttemptCallKey(call: ts.CallExpression, options: { unique?: boolean } = {}): PerAttemptKey | undefined {
  return verdict(redisKey(call) ?? chainKey(outermostOfChain(call), options));
}

/**
 * The claim whose text starts at `offset` of `sf` (the SQL of a query, the `upsert` of a call, the `'NX'` of a SET),
 * when it is keyed on a fresh value. `unique`: an insert whose unique violation the code catches counts as a claim.
 */
export function perAttemptClaimAt(sf: ts.SourceFile, offset: number, options: { unique?: boolean } = {}): PerAttemptKey | undefined {
  let node: ts.Node = sf;
  for (let deeper: ts.Node | undefined = sf; deeper; ) {
    node = deeper;
    deeper = ts.forEachChild(node, (child) => (child.getStart(sf) <= offset && offset < child.end ? child : undefined));
  }
  for (let n: ts.Node | undefined = node; n && !ts.isSourceFile(n); n = n.parent) {
    if (ts.isTaggedTemplateExpression(n)) return perAttemptSqlKey(n, options);
    if (ts.isCallExpression(n)) return perAttemptSqlKey(n, options) ?? verdict(redisKey(n) ?? chainKey(outermostOfChain(n), options));
    // SQL kept in a const: the query that is given it.
    if (ts.isVariableDeclaration(n)) {
      const name = n.name;
      const scope = innermostFunction(n) ?? sf;
      const user = ts.isIdentifier(name) ? calls(scope).find((c) => c.arguments.some((a) => ts.isIdentifier(unwrap(a)) && (unwrap(a) as ts.Identifier).text === name.text)) : undefined;
      return user ? perAttemptSqlKey(user, options) : undefined;
    }
    if (ts.isStatement(n) || ts.isBlock(n)) return undefined;
  }
  return undefined;
}

function outermostOfChain(call: ts.CallExpression): ts.CallExpression {
  let top = call;
  while (ts.isPropertyAccessExpression(top.parent) && top.parent.expression === top && ts.isCallExpression(top.parent.parent) && top.parent.parent.expression === top.parent) top = top.parent.parent;
  return top;
}

function redisKey(call: ts.CallExpression): ClaimKey | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const method = call.expression.name.text.toLowerCase();
  const args = [...call.arguments];
  if (args.some(ts.isSpreadElement)) return undefined;
  if (method === 'set' && args.length >= 3 && args.slice(2).some((a) => /^nx$/i.test(stringValue(a) ?? '') || isTrue(objectProperty(unwrap(a), 'NX') ?? objectProperty(unwrap(a), 'nx')))) {
    return { mode: 'key', slots: [perAttemptValue(args[0]!)], claim: 'SET NX' };
  }
  if (method === 'setnx') return args[0] ? { mode: 'key', slots: [perAttemptValue(args[0])], claim: 'SETNX' } : undefined;
  // The set's name and the member together are what repeats: either made fresh and nothing ever collides.
  if (method === 'sadd' || method === 'hsetnx') {
    const members = method === 'sadd' ? args.slice(1).flatMap((a) => arrayOf(a) ?? [a]) : args.slice(1, 2);
    if (!args[0] || members.length !== 1) return undefined;
    return { mode: 'key', slots: [perAttemptValue(args[0]), perAttemptValue(members[0]!)], claim: method === 'sadd' ? 'SADD' : 'HSETNX' };
  }
  return undefined;
}

function isTrue(node: ts.Expression | undefined): boolean {
  return node !== undefined && unwrap(node).kind === ts.SyntaxKind.TrueKeyword;
}

interface Link {
  name: string;
  args: readonly ts.Expression[];
}

function chainKey(call: ts.CallExpression, options: { unique?: boolean }): ClaimKey | undefined {
  const links: Link[] = [];
  for (let node: ts.Expression = call; ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression); node = node.expression.expression) {
    links.unshift({ name: node.expression.name.text, args: node.arguments });
  }
  const find = (name: string) => links.find((l) => l.name === name);
  const prismaArgs = (name: string) => (links.length === 1 && find(name) ? objectOf(find(name)!.args[0]) : undefined);
  const upsert = find('upsert');
  const where = prismaArgs('upsert') && objectProperty(prismaArgs('upsert'), 'where');
  if (where) {
    const values = leafValues(where);
    return values && { mode: 'key', slots: values.map((v) => perAttemptValue(v)), claim: 'upsert' };
  }
  const update = links.find((l) => /^(updateOne|updateMany|findOneAndUpdate|replaceOne)$/.test(l.name) && l.args.some((a) => isTrue(objectProperty(objectOf(a), 'upsert'))));
  if (update) {
    const values = leafValues(update.args[0]);
    return values && { mode: 'key', slots: values.map((v) => perAttemptValue(v)), claim: `${update.name} with upsert: true` };
  }
  const data = options.unique ? prismaArgs('create') && objectProperty(prismaArgs('create'), 'data') : undefined;
  if (data) return rowKey(objectOf(data), undefined, 'insert');
  const row = objectOf(find('values')?.args[0] ?? find('insert')?.args[0] ?? upsert?.args[0]);
  const drizzle = find('onConflictDoNothing') ?? find('onConflictDoUpdate');
  if (drizzle) {
    const target = objectProperty(objectOf(drizzle.args[0]), 'target');
    return rowKey(row, target && columnsOf(target, (e) => (ts.isPropertyAccessExpression(e) ? e.name.text : undefined)), drizzle.name);
  }
  const knex = find('onConflict');
  if (knex) return rowKey(row, knex.args[0] && columnsOf(knex.args[0], stringValue), 'onConflict');
  if (upsert) {
    const second = upsert.args[1] && unwrap(upsert.args[1]);
    if (!second) return rowKey(row, undefined, 'upsert');
    // TypeORM `upsert(row, ['eventId'])` / `{ conflictPaths }`, Supabase `{ onConflict: 'event_id' }`.
    const paths = ts.isArrayLiteralExpression(second) ? second : objectProperty(objectOf(second), 'conflictPaths') ?? objectProperty(objectOf(second), 'onConflict');
    // Options without conflict columns (Sequelize `{ returning }`, Supabase `{ ignoreDuplicates }`): no target stated.
    if (!paths) return ts.isObjectLiteralExpression(second) ? rowKey(row, undefined, 'upsert') : undefined;
    const conflict = unwrap(paths);
    const names = ts.isObjectLiteralExpression(conflict)
      ? conflict.properties.map((p) => propertyName(p.name))
      : ts.isArrayLiteralExpression(conflict)
        ? columnsOf(conflict, stringValue)
        : stringValue(conflict)?.split(',').map((s) => s.trim());
    return names ? rowKey(row, names, 'upsert') : undefined;
  }
  if (find('orIgnore')) return rowKey(row, undefined, 'orIgnore()');
  // An insert whose unique violation the code treats as "seen before": any unique column may be what rejects it.
  const insertOne = find('insertOne');
  if (options.unique && (row || insertOne)) return rowKey(row ?? objectOf(insertOne?.args[0]), undefined, 'insert');
  return undefined;
}

/** The key's values in the row object (`target` names its columns), or every value when no target is stated. */
function rowKey(row: ts.ObjectLiteralExpression | undefined, target: Array<string | undefined> | undefined, claim: string): ClaimKey | undefined {
  if (!row) return undefined;
  const spread = row.properties.some((p) => !ts.isPropertyAssignment(p) && !ts.isShorthandPropertyAssignment(p));
  if (!target) {
    // A spread adds values we cannot see: one of them may be the stable key.
    if (spread) return undefined;
    return { mode: 'all', slots: row.properties.map((p) => perAttemptValue(ts.isPropertyAssignment(p) ? p.initializer : (p as ts.ShorthandPropertyAssignment).name)), claim };
  }
  if (target.length === 0 || target.some((t) => t === undefined)) return undefined;
  const byName = new Map(row.properties.flatMap((p) => {
    const name = propertyName(p.name);
    const value = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : undefined;
    return name !== undefined && value ? [[simple(name), value] as const] : [];
  }));
  return { mode: 'key', slots: target.map((t) => {
    const value = byName.get(simple(t!));
    return value ? perAttemptValue(value) : undefined;
  }), claim };
}

/** `event_id`, `eventId` and `"EventId"` name one column. */
function simple(name: string): string {
  return name.replace(/_/g, '').toLowerCase();
}

/** `x` or `[x, y]`, each read by `name`. */
function columnsOf(node: ts.Expression, name: (e: ts.Expression) => string | undefined): Array<string | undefined> {
  const value = unwrap(node);
  return ts.isArrayLiteralExpression(value) ? value.elements.map((e) => name(unwrap(e))) : [name(value)];
}

/** The values at the leaves of a filter (`{ id }`, `{ tenantId_eventId: { tenantId, eventId } }`); undefined on a spread or a non-literal. */
function leafValues(node: ts.Expression | undefined): ts.Expression[] | undefined {
  const object = objectOf(node);
  if (!object) return undefined;
  const out: ts.Expression[] = [];
  for (const p of object.properties) {
    if (ts.isShorthandPropertyAssignment(p)) out.push(p.name);
    else if (ts.isPropertyAssignment(p)) {
      const value = unwrap(p.initializer);
      if (ts.isObjectLiteralExpression(value)) {
        const inner = leafValues(value);
        if (!inner) return undefined;
        out.push(...inner);
      } else out.push(value);
    } else return undefined;
  }
  return out;
}

/** An object literal written in place or held by a const of the same function. */
function objectOf(node: ts.Expression | undefined): ts.ObjectLiteralExpression | undefined {
  if (!node) return undefined;
  let value = unwrap(node);
  if (ts.isIdentifier(value)) value = constOf(value) ?? value;
  if (ts.isArrayLiteralExpression(value) && value.elements.length === 1) value = unwrap(value.elements[0]!);
  return ts.isObjectLiteralExpression(value) ? value : undefined;
}

function arrayOf(node: ts.Expression | undefined): ts.Expression[] | undefined {
  if (!node) return undefined;
  let value = unwrap(node);
  if (ts.isIdentifier(value)) value = constOf(value) ?? value;
  if (!ts.isArrayLiteralExpression(value) || value.elements.some(ts.isSpreadElement)) return undefined;
  return [...value.elements];
}

function constString(id: ts.Identifier): ts.Expression | undefined {
  const init = constOf(id, true);
  return init && (ts.isStringLiteral(init) || ts.isNoSubstitutionTemplateLiteral(init) || ts.isTemplateExpression(init)) ? init : undefined;
}

/**
 * A `const` of the function around `id`; with `moduleLevel`, also one of the file (SQL text kept at module level).
 * A module-level value is made once per process, so rows and parameters are only read from the function.
 */
function constOf(id: ts.Identifier, moduleLevel = false): ts.Expression | undefined {
  const scope = innermostFunction(id) ?? (moduleLevel ? id.getSourceFile() : undefined);
  if (!scope) return undefined;
  let found: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer && (node.parent.flags & ts.NodeFlags.Const) !== 0) found = unwrap(node.initializer);
    else ts.forEachChild(node, visit);
  };
  visit(scope);
  if (!found && moduleLevel && scope !== id.getSourceFile()) {
    for (const statement of id.getSourceFile().statements) {
      if (!ts.isVariableStatement(statement) || (statement.declarationList.flags & ts.NodeFlags.Const) === 0) continue;
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name) && d.name.text === id.text && d.initializer) found = unwrap(d.initializer);
    }
  }
  return found;
}
