import type { StoreModule } from './types.js';

/**
 * Where each store's createPool (its pool.ts) finds its server: the environment variable the generated tests read
 * too, whether createPool takes that variable unset (DynamoDB falls back to the AWS SDK's own endpoint; the others
 * need a string), and the fallback an instance module uses when it is unset. The one table the README, the
 * frameworks' wiring examples and apply's instance modules print the pool from. Static text per store id: nothing
 * from the config reaches it.
 */
const POOL_SOURCES: Record<StoreModule['id'], { readonly env: string; readonly unsetAllowed: boolean; readonly fallback?: string }> = {
  postgres: { env: 'DATABASE_URL', unsetAllowed: false, fallback: "''" },
  mysql: { env: 'DATABASE_URL', unsetAllowed: false, fallback: "''" },
  sqlite: { env: 'DATABASE_URL', unsetAllowed: false, fallback: "'idempotency.db'" },
  libsql: { env: 'DATABASE_URL', unsetAllowed: false, fallback: "'file:idempotency.db'" },
  redis: { env: 'REDIS_URL', unsetAllowed: false, fallback: "'redis://127.0.0.1:6379'" },
  dynamodb: { env: 'DYNAMODB_ENDPOINT', unsetAllowed: true },
};

/** A store id apply or a README may meet (an old manifest's, an unknown one) as one of the table's: PostgreSQL else. */
function sourceOf(storeId: string | undefined) {
  return POOL_SOURCES[storeId !== undefined && Object.hasOwn(POOL_SOURCES, storeId) ? (storeId as StoreModule['id']) : 'postgres'];
}


/**
 * The README's pool: `createPool(process.env.REDIS_URL!, POLICY)` in TypeScript (the non-null assertion only where
 * createPool needs a string), `createPool(process.env.REDIS_URL, POLICY)` in JavaScript.
 */
export function poolExpression(storeId: string | undefined, javascript: boolean): string {
  const source = sourceOf(storeId);
  return `createPool(process.env.${source.env}${javascript || source.unsetAllowed ? '' : '!'}, POLICY)`;
}

/**
 * An instance module's pool (apply): `process.env['NAME']` (index-signature access, which every tsconfig accepts)
 * with the store's fallback, then `extra` arguments after POLICY.
 */
export function instancePoolExpression(storeId: string | undefined, extra = ''): string {
  const source = sourceOf(storeId);
  const read = `process.env['${source.env}']${source.fallback === undefined ? '' : ` ?? ${source.fallback}`}`;
  return `createPool(${read}, POLICY${extra ? `, ${extra}` : ''})`;
}
