import { expressPostgresTarget } from './targets/expressPostgres.js';
import { fastifyPostgresTarget } from './targets/fastifyPostgres.js';
import { nestjsPostgresTarget } from './targets/nestjsPostgres.js';
import { STORE_TARGETS } from './targets/storeTargets.js';
import type { ScaffoldTarget } from './types.js';
import type { StackDesign } from '../model/types.js';

/** Checked in order; the first target that supports the stack generates it. */
export const SCAFFOLD_TARGETS: readonly ScaffoldTarget[] = [expressPostgresTarget, fastifyPostgresTarget, nestjsPostgresTarget, ...STORE_TARGETS];

export function findTarget(stack: StackDesign): ScaffoldTarget | undefined {
  return SCAFFOLD_TARGETS.find((target) => target.supports(stack));
}
