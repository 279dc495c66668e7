import type { StackDesign } from '../../model/types.js';
import { HONO } from '../frameworks/hono.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

export const honoPostgresTarget = postgresHttpTarget({
  id: 'typescript-hono-postgres',
  label: 'Hono + PostgreSQL (TypeScript or JavaScript, Node or Web-standard runtime)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'hono' && !stack.agnostic,
  framework: HONO,
  adapter: { path: 'hono.ts', template: 'typescript/hono/hono.ts', role: 'middleware', purpose: 'Hono middleware: claim, run the handler, record its Web Response, then hand it on' },
});
