import type { StackDesign } from '../../model/types.js';
import { EXPRESS } from '../frameworks/express.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

/** The Express adapter, whatever the store. */
export const EXPRESS_ADAPTER = {
  name: 'Express',
  framework: EXPRESS,
  adapter: { path: 'express.ts', template: 'typescript/express/express.ts', role: 'middleware', purpose: 'Express middleware: hold, record, then send' },
  wiringPurpose: 'createIdempotency(): store, core and one middleware per route',
} as const;

export const expressPostgresTarget = postgresHttpTarget({
  ...EXPRESS_ADAPTER,
  id: 'typescript-express-postgres',
  label: 'Express + PostgreSQL (TypeScript or JavaScript)',
  // The agnostic design uses the TypeScript + PostgreSQL reference, so it gets this code as its example. JavaScript
  // projects get the same files with the types stripped (generateScaffold does that for every target).
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && (stack.framework === 'express' || stack.agnostic),
});
