import type { StackDesign } from '../../model/types.js';
import { FASTIFY } from '../frameworks/fastify.js';
import { postgresHttpTarget } from '../postgresHttpTarget.js';

/** The Fastify adapter, whatever the store. */
export const FASTIFY_ADAPTER = {
  name: 'Fastify',
  framework: FASTIFY,
  adapter: { path: 'fastify.ts', template: 'typescript/fastify/fastify.ts', role: 'middleware', purpose: 'Fastify route hooks: claim in preHandler, record in onSend, then send' },
  wiringPurpose: undefined,
} as const;

export const fastifyPostgresTarget = postgresHttpTarget({
  ...FASTIFY_ADAPTER,
  id: 'typescript-fastify-postgres',
  label: 'Fastify + PostgreSQL (TypeScript)',
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && stack.framework === 'fastify' && stack.language !== 'javascript' && !stack.agnostic,
});
