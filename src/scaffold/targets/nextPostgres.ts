import type { StackDesign } from '../../model/types.js';
import { NEXT } from '../frameworks/next.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

export const nextPostgresTarget = postgresHttpTarget({
  id: 'typescript-nextjs-postgres',
  label: 'Next.js + PostgreSQL (TypeScript or JavaScript: route handlers, Pages API routes, Server Actions)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'nextjs' && !stack.agnostic,
  framework: NEXT,
  adapter: { path: 'next.ts', template: 'typescript/next/next.ts', role: 'middleware', purpose: 'Next.js wrappers: route handler, Pages API route and Server Action; claim, run, record, then answer' },
  wiringPurpose: 'createIdempotency(): store, core, and the Next.js wrappers by action name',
});
