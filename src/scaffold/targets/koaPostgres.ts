import type { StackDesign } from '../../model/types.js';
import { KOA } from '../frameworks/koa.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

export const koaPostgresTarget = postgresHttpTarget({
  id: 'typescript-koa-postgres',
  label: 'Koa + PostgreSQL (TypeScript or JavaScript)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'koa' && !stack.agnostic,
  framework: KOA,
  adapter: { path: 'koa.ts', template: 'typescript/koa/koa.ts', role: 'middleware', purpose: 'Koa middleware: claim, run the rest of the chain, record ctx.body, then let Koa send it' },
});
