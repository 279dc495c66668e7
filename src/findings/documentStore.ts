import { ts } from 'ts-morph';

/** SQL clients and ORMs: a project with one of them has tables, whatever else it declares. */
const SQL_LIBRARIES = [
  'pg', 'postgres', 'mysql', 'mysql2', 'mariadb', 'sqlite3', 'better-sqlite3', '@libsql/client', '@prisma/client', 'prisma', 'typeorm', 'knex',
  'sequelize', 'sequelize-typescript', 'drizzle-orm', 'kysely', '@mikro-orm/core', 'slonik', '@vercel/postgres', '@neondatabase/serverless', '@supabase/supabase-js',
];

/**
 * The project keeps its data in MongoDB: its config says so, or (no config yet) it declares Mongoose or the driver and
 * no SQL library. A fix then speaks of a collection with a unique index and an upsert or a duplicate-key error, not of
 * a table and ON CONFLICT.
 */
export function mongoOnly(source: { dependencies: ReadonlyMap<string, string>; database?: string }): boolean {
  if (source.database !== undefined && source.database !== 'unknown') return source.database === 'mongodb';
  const { dependencies } = source;
  return ['mongoose', 'mongodb', '@typegoose/typegoose'].some((name) => dependencies.has(name)) && !SQL_LIBRARIES.some((name) => dependencies.has(name));
}

/**
 * A Mongoose model made by `call`: `mongoose.model('Team', schema)`, `model<ITeam>('Team', schema)`, a connection's
 * `db.model('Team', schema)`. Its name (when a string) and its schema argument (a variable or a schema written inline).
 */
export function mongooseModel(call: ts.CallExpression): { name?: string; schema?: ts.Expression } | undefined {
  const fn = call.expression;
  if (!((ts.isIdentifier(fn) && fn.text === 'model') || (ts.isPropertyAccessExpression(fn) && fn.name.text === 'model'))) return undefined;
  const [name, schema] = call.arguments;
  return { ...(name && ts.isStringLiteralLike(name) ? { name: name.text } : {}), ...(schema ? { schema } : {}) };
}
