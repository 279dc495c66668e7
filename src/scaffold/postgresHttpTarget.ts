import { httpTarget, type HttpTargetOptions } from './httpTarget.js';
import { POSTGRES_STORE } from './stores/postgres.js';
import type { ScaffoldTarget } from './types.js';

export type PostgresHttpTargetOptions = HttpTargetOptions;

/** A TypeScript + PostgreSQL target for one HTTP framework: httpTarget(options, PostgreSQL store). */
export function postgresHttpTarget(options: PostgresHttpTargetOptions): ScaffoldTarget {
  return httpTarget(options, POSTGRES_STORE);
}
