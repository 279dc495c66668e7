import type { StackDesign } from '../../model/types.js';
import { NESTJS } from '../frameworks/nestjs.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

export const nestjsPostgresTarget = postgresHttpTarget({
  id: 'typescript-nestjs-postgres',
  label: 'NestJS + PostgreSQL (TypeScript, Express platform)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'nestjs' && stack.language !== 'javascript' && !stack.agnostic,
  framework: NESTJS,
  adapter: { path: 'nestjs.ts', template: 'typescript/nestjs/nestjs.ts', role: 'middleware', purpose: 'NestJS interceptor, @Idempotent() and the providers: claim after guards, record, then send' },
});
