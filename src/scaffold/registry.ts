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
