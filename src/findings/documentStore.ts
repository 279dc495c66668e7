/** SQL clients and ORMs: a project with one of them has tables, whatever else it declares. */
const SQL_LIBRARIES = [
  'pg', 'postgres', 'mysql', 'mysql2', 'mariadb', 'sqlite3', 'better-sqlite3', '@libsql/client', '@prisma/client', 'prisma', 'typeorm', 'knex',
  'sequelize', 'sequelize-typescript', 'drizzle-orm', 'kysely', '@mikro-orm/core', 'slonik', '@vercel/postgres', '@neondatabase/serverless', '@supabase/supabase-js',
];

/**
 * The project keeps its data in MongoDB alone (Mongoose or the driver, no SQL library): a fix speaks of a collection
 * with a unique index and an upsert or a duplicate-key error, not of a table and ON CONFLICT.
 */
export function mongoOnly(dependencies: ReadonlyMap<string, string>): boolean {
  return ['mongoose', 'mongodb', '@typegoose/typegoose'].some((name) => dependencies.has(name)) && !SQL_LIBRARIES.some((name) => dependencies.has(name));
}
