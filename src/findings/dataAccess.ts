import { ts } from 'ts-morph';
import { objectProperty, propertyName, stringValue, unwrap } from '../inspect/parse/astHelpers.js';
import { perAttemptCallKey } from './conflictKey.js';
import { literal } from './providerCalls.js';
import { repositoryOf, repositoryWrite } from './repositoryWrites.js';
import { calls, innermostFunction } from './walk.js';

export interface DataAccess {
  call: ts.CallExpression;
  kind: 'read' | 'create' | 'upsert' | 'update' | 'delete';
  /** Table, model or provider resource, e.g. 'customer', 'customers', 'stripe.customers'. */
  target: string;
  /** Equality columns of a read. */
  columns: string[];
  /** An upsert keyed on a value made fresh per attempt, counted as the create it is: that value (`randomUUID()`). */
  freshKey?: string;
  /** Which model library the call is for, where the method tells ('model': a `create`/`find…` both Mongoose and Sequelize have). */
  library?: 'mongoose' | 'sequelize' | 'model';
  /** Fields changed by an amount or appended to (`$inc`, `increment`), empty when they cannot be read: see WriteFact.relative. */
  relative?: string[];
}

const PROMISE_METHOD = /^(then|catch|finally)$/;

/** Existence checks. `count` and `findMany` are quota checks and listings, not "is it there yet". */
const PRISMA_READ = /^(findFirst|findFirstOrThrow|findUnique|findUniqueOrThrow)$/;
const MODEL_READ = /^(findOne|findOneBy|findBy|find|exists)$/;

/**
 * Reads, inserts and upserts in one function, across Prisma, Supabase/Knex query chains, Mongoose models and the
 * Stripe customer API: enough to see "look it up, and create it when missing".
 */
export function dataAccesses(fn: ts.Node): DataAccess[] {
  const out: DataAccess[] = [];
  for (const call of calls(fn)) {
    if (!ts.isPropertyAccessExpression(call.expression)) continue;
    // Only the top of a chain: `a.from('t').select().eq()` is read once, at `.eq(...)`'s outermost call. A promise's
    // `.then()` / `.catch()` / `.finally()` is no part of the query: `prisma.token.deleteMany(…).then(…)` is the delete.
    if (ts.isPropertyAccessExpression(call.parent) && ts.isCallExpression(call.parent.parent) && !PROMISE_METHOD.test(call.parent.name.text)) continue;
    const chain = chainOf(call);
    const found = prisma(call) ?? queryBuilder(chain, call) ?? stripeCustomers(call) ?? typeorm(call) ?? mongoose(call);
    if (found) out.push(found);
  }
  return out;
}

interface Link {
  name: string;
  args: readonly ts.Expression[];
}

/** A knex instance called with its table: `knex('tasks')`, `(trx ?? knex)('tasks')`, `db('users')`. */
const KNEX_ROOT = /^(knex|trx|db|tx|database)$/i;

function chainOf(call: ts.CallExpression): Link[] {
  const links: Link[] = [];
  let node: ts.Expression = call;
  while (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
    links.unshift({ name: node.expression.name.text, args: node.arguments });
    node = node.expression.expression;
  }
  // The chain's root: `knex('tasks')` (or `(trx ?? knex)('tasks')`) names the table as `.table('tasks')` would.
  if (ts.isCallExpression(node)) {
    const callee = unwrap(node.expression);
    const roots = ts.isBinaryExpression(callee) ? [unwrap(callee.left), unwrap(callee.right)] : [callee];
    if (roots.every((root) => ts.isIdentifier(root) && KNEX_ROOT.test(root.text))) links.unshift({ name: 'table', args: node.arguments });
  }
  return links;
}

function prisma(call: ts.CallExpression): DataAccess | undefined {
  const callee = call.expression as ts.PropertyAccessExpression;
  const method = callee.name.text;
  if (!ts.isPropertyAccessExpression(callee.expression)) return undefined;
  const model = callee.expression.name.text;
  const client = callee.expression.expression.getText();
  if (!/prisma|\bdb\b|\btx\b|client/i.test(client)) return undefined;
  if (PRISMA_READ.test(method)) return { call, kind: 'read', target: model, columns: whereKeys(literal(call.arguments[0])) };
  if (method === 'create' || method === 'createMany') return { call, kind: 'create', target: model, columns: [] };
  if (method === 'upsert') return withRelative(upsert(call, model), prismaRelative(call));
  if (method === 'update' || method === 'updateMany') return withRelative({ call, kind: 'update', target: model, columns: [] }, prismaRelative(call));
  if (method === 'delete' || method === 'deleteMany') return { call, kind: 'delete', target: model, columns: [] };
  return undefined;
}

const withRelative = (access: DataAccess, fields: string[]): DataAccess => (fields.length > 0 ? { ...access, relative: fields } : access);

/** Prisma's atomic number operations in `data` (or an upsert's `update`): `{ stock: { increment: 1 } }`. */
function prismaRelative(call: ts.CallExpression): string[] {
  const args = literal(call.arguments[0]);
  const fields: string[] = [];
  for (const part of ['data', 'update']) {
    const data = args?.properties.find((p) => propertyName(p.name as ts.PropertyName) === part);
    const value = data && ts.isPropertyAssignment(data) ? unwrap(data.initializer) : undefined;
    if (!value || !ts.isObjectLiteralExpression(value)) continue;
    for (const field of value.properties) {
      const inner = ts.isPropertyAssignment(field) ? unwrap(field.initializer) : undefined;
      const name = propertyName(field.name as ts.PropertyName);
      if (name && inner && ts.isObjectLiteralExpression(inner) && inner.properties.some((op) => /^(increment|decrement|multiply|divide)$/.test(propertyName(op.name as ts.PropertyName) ?? ''))) fields.push(name);
    }
  }
  return [...new Set(fields)];
}

/** An upsert keyed on a fresh value (`where: { id: randomUUID() }`) never meets the row a retry wrote: a create. */
function upsert(call: ts.CallExpression, target: string): DataAccess {
  const fresh = perAttemptCallKey(call);
  return fresh ? { call, kind: 'create', target, columns: [], freshKey: fresh.value } : { call, kind: 'upsert', target, columns: [] };
}

/**
 * The equality columns of a find filter: those under `where` (Sequelize, TypeORM 0.3: `findOne({ where: { email } })`),
 * else the filter's own keys (Mongoose, TypeORM 0.2: `findOne({ email })`).
 */
function filterColumns(filter: ts.ObjectLiteralExpression | undefined): string[] {
  const where = whereKeys(filter);
  return where.length > 0 ? where : (filter?.properties.flatMap((p) => propertyName(p.name as ts.PropertyName) ?? []) ?? []);
}

function whereKeys(args: ts.ObjectLiteralExpression | undefined): string[] {
  const where = args?.properties.find((p) => propertyName(p.name as ts.PropertyName) === 'where');
  const value = where && ts.isPropertyAssignment(where) ? unwrap(where.initializer) : undefined;
  if (!value || !ts.isObjectLiteralExpression(value)) return [];
  return value.properties.flatMap((p) => {
    const name = propertyName(p.name as ts.PropertyName);
    return name ? [name] : [];
  });
}

function queryBuilder(chain: Link[], call: ts.CallExpression): DataAccess | undefined {
  // `fastify.knex<Task>('tasks')`: the instance reached as a property, called with its table.
  const from = chain.find((l) => l.name === 'from' || l.name === 'table' || l.name === 'into' || l.name === 'knex');
  const table = from ? stringValue(from.args[0]) : undefined;
  if (!table) return undefined;
  const names = chain.map((l) => l.name);
  if (names.includes('upsert') || names.includes('onConflict')) return upsert(call, table);
  if (names.includes('insert')) return { call, kind: 'create', target: table, columns: [] };
  if (names.includes('update')) return { call, kind: 'update', target: table, columns: [] };
  // knex's `.increment('stock', 5)` / `.decrement(…)`, or an object of columns: `.increment({ stock: 5 })`.
  const counter = chain.find((l) => l.name === 'increment' || l.name === 'decrement');
  if (counter) {
    const obj = counter.args[0] && ts.isObjectLiteralExpression(counter.args[0]) ? counter.args[0] : undefined;
    const fields = obj ? obj.properties.flatMap((p) => propertyName(p.name as ts.PropertyName) ?? []) : [stringValue(counter.args[0])].filter((f): f is string => f !== undefined);
    return { call, kind: 'update', target: table, columns: [], relative: fields };
  }
  if (names.includes('delete') || names.includes('del')) return { call, kind: 'delete', target: table, columns: [] };
  if (names.includes('select') || names.includes('first') || names.includes('where')) {
    const columns = chain.filter((l) => l.name === 'eq' || l.name === 'where').flatMap((l) => {
      const col = stringValue(l.args[0]);
      if (col) return [col];
      const obj = l.args[0] && ts.isObjectLiteralExpression(l.args[0]) ? l.args[0] : undefined;
      return obj ? obj.properties.flatMap((p) => propertyName(p.name as ts.PropertyName) ?? []) : [];
    });
    return { call, kind: 'read', target: table, columns };
  }
  return undefined;
}

/** TypeORM reads that check existence (`find` lists, `count` is a quota check). */
const REPOSITORY_READ = /^(findOne|findOneBy|findOneOrFail|findOneByOrFail|exist|exists|existsBy)$/;

/**
 * TypeORM / MikroORM repositories: `userRepository.findOne({ email })` (0.2), `findOneBy({ email })`,
 * `findOne({ where: { email } })` read; `save` / `insert` create, unless the entity was just read or its id comes from
 * the request (an update: the same judgement the code facts make, repositoryWrite).
 */
function typeorm(call: ts.CallExpression): DataAccess | undefined {
  const repository = repositoryOf(call);
  if (!repository) return undefined;
  const method = (call.expression as ts.PropertyAccessExpression).name.text;
  if (REPOSITORY_READ.test(method)) {
    const filter = repository.entity && ts.isObjectLiteralExpression(repository.entity) ? repository.entity : undefined;
    return { call, kind: 'read', target: repository.target, columns: filterColumns(filter) };
  }
  const write = repositoryWrite(call, innermostFunction(call) ?? call.getSourceFile());
  if (!write || (write.kind !== 'create' && write.kind !== 'update' && write.kind !== 'delete')) return undefined;
  return { call, kind: write.kind, target: write.target, columns: [], ...(write.freshKey ? { freshKey: write.freshKey } : {}), ...(write.relative ? { relative: write.relative } : {}) };
}

function stripeCustomers(call: ts.CallExpression): DataAccess | undefined {
  const text = call.expression.getText().replace(/\s+/g, '');
  const m = /stripe\w*(?:\(\))?\.customers\.(list|search|create)$/i.exec(text);
  if (!m) return undefined;
  return { call, kind: m[1] === 'create' ? 'create' : 'read', target: 'stripe.customers', columns: [] };
}

/** Built-in globals and classes whose static `create` is no model: `Object.create(proto)`, `Promise.race`. */
const NOT_A_MODEL = /^(Object|Array|Promise|Reflect|Math|JSON|Date|Number|String|Symbol|Map|Set|WeakMap|WeakSet|Buffer|Error|URL|Intl|Proxy|BigInt|Boolean|RegExp|Function|Atomics|Response|Request|Headers|AbortSignal|AbortController|Blob|File|FormData)$/;

/** Mongoose model writes: what each method does to the collection. */
const MONGOOSE_WRITES: Record<string, DataAccess['kind']> = {
  create: 'create',
  insertOne: 'create',
  insertMany: 'create',
  updateOne: 'update',
  updateMany: 'update',
  findOneAndUpdate: 'update',
  findByIdAndUpdate: 'update',
  replaceOne: 'update',
  findOneAndReplace: 'update',
  bulkWrite: 'update',
  deleteOne: 'delete',
  deleteMany: 'delete',
  findOneAndDelete: 'delete',
  findByIdAndDelete: 'delete',
};

/** Sequelize's static writes, told from a mongoose method of the same name by their `where` option. */
const SEQUELIZE_WRITES: Record<string, { kind: DataAccess['kind']; options: number }> = {
  update: { kind: 'update', options: 1 },
  destroy: { kind: 'delete', options: 0 },
  increment: { kind: 'update', options: 1 },
  decrement: { kind: 'update', options: 1 },
};

/**
 * Mongoose and Sequelize models: `Order.findOne({ email })` reads; `Order.create(…)`, `Order.updateOne(filter,
 * update, { upsert: true })`, `Product.findOneAndUpdate(filter, { $inc: { stock: n } })` write. The model is a
 * capitalised name (`Order`), or a NestJS-injected one (`this.orderModel` → Order).
 */
function mongoose(top: ts.CallExpression): DataAccess | undefined {
  const call = queryBase(top);
  const callee = call.expression as ts.PropertyAccessExpression;
  const receiver = unwrap(callee.expression);
  const injected = ts.isPropertyAccessExpression(receiver) && receiver.expression.kind === ts.SyntaxKind.ThisKeyword ? /^(\w+)Model$/.exec(receiver.name.text)?.[1] : undefined;
  const model = injected ? injected.charAt(0).toUpperCase() + injected.slice(1) : ts.isIdentifier(receiver) && /^[A-Z]/.test(receiver.text) && !NOT_A_MODEL.test(receiver.text) ? receiver.text : receiver.kind === ts.SyntaxKind.ThisKeyword ? loadedClassModel(call) : undefined;
  if (!model) return undefined;
  const method = callee.name.text;
  if (MODEL_READ.test(method)) {
    return { call, kind: 'read', target: model, columns: filterColumns(literal(call.arguments[0])), library: 'model' };
  }
  const sequelize = SEQUELIZE_WRITES[method];
  if (sequelize) {
    if (!optionNamed(call.arguments[sequelize.options], 'where')) return undefined;
    const counter = method === 'increment' || method === 'decrement';
    const first = call.arguments[0];
    const fields = !counter ? [] : first && ts.isObjectLiteralExpression(first) ? first.properties.flatMap((p) => propertyName(p.name as ts.PropertyName) ?? []) : [stringValue(first)].filter((f): f is string => f !== undefined);
    return { call, kind: sequelize.kind, target: model, columns: [], library: 'sequelize', ...(counter ? { relative: fields } : {}) };
  }
  if (method === 'upsert' || method === 'findOrCreate') return { call, kind: 'upsert', target: model, columns: [], library: 'sequelize' };
  if (method === 'bulkCreate') return { call, kind: 'create', target: model, columns: [], library: 'sequelize' };
  const kind = MONGOOSE_WRITES[method];
  if (!kind) return undefined;
  const library = method === 'create' ? 'model' : 'mongoose';
  if (kind !== 'update' || method === 'bulkWrite') return { call, kind, target: model, columns: [], library };
  // `updateOne(filter, update, options)`; findByIdAndUpdate takes the id first, the same positions.
  const upserts = optionNamed(call.arguments[2], 'upsert')?.kind === ts.SyntaxKind.TrueKeyword;
  return withRelative({ call, kind: upserts ? 'upsert' : 'update', target: model, columns: [], library }, mongoRelative(call.arguments[1]));
}

/** Mongoose query modifiers: `Team.findByIdAndUpdate(…).select(…).lean().exec()` is the findByIdAndUpdate. */
const QUERY_MODIFIERS = /^(select|lean|exec|setOptions|populate|sort|limit|skip|session|orFail|projection|collation|hint|maxTimeMS|read|comment)$/;

function queryBase(call: ts.CallExpression): ts.CallExpression {
  let node = call;
  while (ts.isPropertyAccessExpression(node.expression) && QUERY_MODIFIERS.test(node.expression.name.text)) {
    const inner = unwrap(node.expression.expression);
    if (!ts.isCallExpression(inner) || !ts.isPropertyAccessExpression(inner.expression)) break;
    node = inner;
  }
  return node;
}

const IMPORTS_MONGOOSE = /\bfrom\s*['"]mongoose['"]|\brequire\(\s*['"]mongoose['"]\s*\)/;

/**
 * `this` in a static method of a class a Mongoose schema loads (`schema.loadClass(TeamClass)`, in a file that imports
 * mongoose) is the model: `this.findByIdAndUpdate(…)` writes to Team. The model is named after the class, without a
 * `Class` suffix. An arrow function keeps the method's `this`; any other function has its own.
 */
function loadedClassModel(call: ts.CallExpression): string | undefined {
  let node: ts.Node = call.parent;
  while (!ts.isMethodDeclaration(node)) {
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isClassLike(node) || ts.isSourceFile(node)) return undefined;
    node = node.parent;
  }
  const isStatic = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword) ?? false;
  const cls = node.parent;
  if (!isStatic || !ts.isClassLike(cls) || !cls.name || !IMPORTS_MONGOOSE.test(call.getSourceFile().text)) return undefined;
  return cls.name.text.replace(/(?<=.)Class$/, '');
}

/** The value of `name` in an options object literal (parentheses and casts around either looked through). */
function optionNamed(node: ts.Expression | undefined, name: string): ts.Expression | undefined {
  const value = node && objectProperty(unwrap(node), name);
  return value && unwrap(value);
}

/** The fields under `$inc` (and `$mul`) of a MongoDB update document: a `$push` appends an entry, a smaller thing. */
function mongoRelative(update: ts.Expression | undefined): string[] {
  const fields: string[] = [];
  for (const operator of ['$inc', '$mul']) {
    const value = optionNamed(update, operator);
    if (value && ts.isObjectLiteralExpression(value)) fields.push(...value.properties.flatMap((p) => propertyName(p.name as ts.PropertyName) ?? []));
  }
  return fields;
}
