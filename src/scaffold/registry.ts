import { expressPostgresTarget } from './targets/expressPostgres.js';
import { fastifyPostgresTarget } from './targets/fastifyPostgres.js';
import { honoPostgresTarget } from './targets/honoPostgres.js';
import { koaPostgresTarget } from './targets/koaPostgres.js';
import { nestjsPostgresTarget } from './targets/nestjsPostgres.js';
import { nextPostgresTarget } from './targets/nextPostgres.js';
import { plainPostgresTarget } from './targets/plainPostgres.js';
import { STORE_TARGETS } from './targets/storeTargets.js';
import type { ScaffoldTarget } from './types.js';
import type { StackDesign } from '../model/types.js';

/** Checked in order; the first target that supports the stack generates it. */
export const SCAFFOLD_TARGETS: readonly ScaffoldTarget[] = [
  expressPostgresTarget,
  fastifyPostgresTarget,
  nestjsPostgresTarget,
  koaPostgresTarget,
  honoPostgresTarget,
  nextPostgresTarget,
  plainPostgresTarget,
  ...STORE_TARGETS,
];

export function findTarget(stack: StackDesign): ScaffoldTarget | undefined {
  return SCAFFOLD_TARGETS.find((target) => target.supports(stack));
}

/**
 * The target for a stack no target supports, so no project silently gets a document only: the reference (TypeScript
 * or JavaScript on PostgreSQL), or, for a project without a database, whichever target serves storeDatabase "none"
 * (an embedded store) when one is registered.
 */
export function referenceTarget(stack: StackDesign): ScaffoldTarget | undefined {
  // The project's own framework on the reference store first (NestJS on MySQL gets the NestJS adapter).
  const sameFramework = stack.agnostic ? undefined : findTarget({ ...stack, storeDatabase: 'postgres' });
  if (sameFramework) return sameFramework;
  const noDatabase = stack.database === 'unknown' || (stack.database as string) === 'none';
  const stores = noDatabase ? ['none', 'postgres'] : ['postgres'];
  for (const storeDatabase of stores) {
    const target = findTarget({ ...stack, agnostic: true, storeDatabase: storeDatabase as StackDesign['storeDatabase'] });
    if (target) return target;
  }
  return undefined;
}
