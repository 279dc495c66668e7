import type { Database } from '../../config/schema.js';
import { DYNAMODB_STORE } from './dynamodb.js';
import { LIBSQL_STORE } from './libsql.js';
import { MYSQL_STORE } from './mysql.js';
import { POSTGRES_STORE } from './postgres.js';
import { REDIS_STORE } from './redis.js';
import { SQLITE_STORE } from './sqlite.js';
import type { StoreModule } from './types.js';

export type { StoreModule, StoreTestHooks, StoreWiring } from './types.js';
export { DYNAMODB_STORE, LIBSQL_STORE, MYSQL_STORE, POSTGRES_STORE, REDIS_STORE, SQLITE_STORE };

/** Every store the scaffold can target; one line per store. */
export const STORE_MODULES: readonly StoreModule[] = [POSTGRES_STORE, MYSQL_STORE, SQLITE_STORE, LIBSQL_STORE, REDIS_STORE, DYNAMODB_STORE];

/**
 * The store for a design's `stack.storeDatabase`. A database without a store module of its own (MongoDB)
 * gets none: the document then shows its code sketches instead of generated files.
 */
export function storeFor(database: Database): StoreModule | undefined {
  return STORE_MODULES.find((store) => store.serves.includes(database));
}
