import type { StackDesign } from '../../model/types.js';
import { PLAIN } from '../frameworks/plain.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

/** Projects without a web framework (workers, scripts): the plain idempotent(fn) wrapper over the same core. */
export const plainPostgresTarget = postgresHttpTarget({
  id: 'typescript-plain-postgres',
  label: 'no web framework + PostgreSQL (TypeScript or JavaScript: idempotent(fn) for workers, scripts, tRPC, GraphQL)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'none' && !stack.agnostic,
  framework: PLAIN,
  adapter: { path: 'plain.ts', template: 'typescript/plain/plain.ts', role: 'middleware', purpose: 'idempotent(fn): run a function once per (scope, key), replay its stored JSON result' },
  wiringPurpose: 'createIdempotency(): store, core, and idempotent(name, call, work) for every action',
});
