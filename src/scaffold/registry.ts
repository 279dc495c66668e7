import { httpTarget } from './httpTarget.js';
import { STORE_MODULES, type StoreModule } from './stores/index.js';
import { ADAPTERS, type Adapter } from './targets/adapters.js';
import type { ScaffoldTarget } from './types.js';
import { noHttpRoute, type ReachedBy } from '../model/httplessActions.js';
import type { StackDesign } from '../model/types.js';

/**
 * One framework adapter on one store: `typescript-<framework>-<store>`. JavaScript projects get the same files with
 * the types stripped wherever the adapter allows it; the technology-agnostic design gets Express on PostgreSQL, the
 * reference its document describes.
 */
function compose(adapter: Adapter, store: StoreModule): ScaffoldTarget {
  const reference = adapter.serves === 'express' && store.id === 'postgres';
  return httpTarget(
    {
      id: `typescript-${adapter.idName}-${store.id}`,
      label: `${adapter.name} + ${store.label} (${adapter.javascript ? 'TypeScript or JavaScript' : 'TypeScript'}${adapter.labelDetail ?? ''})`,
      framework: adapter.framework,
      adapter: adapter.adapter,
      ...(adapter.wiringPurpose ? { wiringPurpose: adapter.wiringPurpose } : {}),
      supports: (stack: StackDesign) => {
        // The reference serves a stack whose framework is unknown too; a known one keeps its own adapter (referenceTarget).
        if (reference && stack.agnostic && stack.storeDatabase === 'postgres' && (stack.framework === 'unknown' || stack.framework === 'express')) return true;
        if (stack.agnostic || stack.framework !== adapter.serves || !store.serves.includes(stack.storeDatabase)) return false;
        return stack.language === 'typescript' || adapter.javascript;
      },
    },
    store,
  );
}

/** Every adapter on every store; checked in order, the first target that supports the stack generates it. */
export const SCAFFOLD_TARGETS: readonly ScaffoldTarget[] = STORE_MODULES.flatMap((store) => ADAPTERS.map((adapter) => compose(adapter, store)));

export function findTarget(stack: StackDesign): ScaffoldTarget | undefined {
  return SCAFFOLD_TARGETS.find((target) => target.supports(stack));
}

/**
 * The framework the reference scaffold serves for a stack: its own, except that an unknown framework whose actions
 * include no plain HTTP route (GraphQL mutations, tRPC procedures, consumers, cron jobs: see noHttpRoute) gets the
 * plain idempotent(fn) wrapper ("none"), which a resolver or procedure calls, rather than an Express adapter for a
 * server the project does not have.
 */
export function referenceFramework(stack: Pick<StackDesign, 'framework'>, actions: readonly ReachedBy[] = []): StackDesign['framework'] {
  return stack.framework === 'unknown' && noHttpRoute(actions) ? 'none' : stack.framework;
}

/**
 * The target for a stack no target supports, so no project silently gets a document only: the reference (TypeScript
 * or JavaScript on PostgreSQL), or, for a project without a database, whichever target serves storeDatabase "none"
 * (an embedded store) when one is registered. `actions` (the design's) decide the framework where it is unknown
 * (referenceFramework).
 */
export function referenceTarget(stack: StackDesign, actions: readonly ReachedBy[] = []): ScaffoldTarget | undefined {
  // The project's own framework on the reference store first: NestJS on MongoDB gets the NestJS adapter, and a
  // kafkajs worker whose database is unknown gets the plain wrapper, not an Express adapter it has no use for; so does
  // a GraphQL or tRPC server whose framework is unknown.
  const framework = referenceFramework(stack, actions);
  const sameFramework = framework === 'unknown' ? undefined : findTarget({ ...stack, framework, agnostic: false, storeDatabase: 'postgres' });
  if (sameFramework) return sameFramework;
  const noDatabase = stack.database === 'unknown' || (stack.database as string) === 'none';
  const stores = noDatabase ? ['none', 'postgres'] : ['postgres'];
  for (const storeDatabase of stores) {
    const target = findTarget({ ...stack, agnostic: true, storeDatabase: storeDatabase as StackDesign['storeDatabase'] });
    if (target) return target;
  }
  // Last resort, whatever the framework (a JavaScript Fastify project, whose adapter is TypeScript only): the reference.
  return findTarget({ ...stack, agnostic: true, framework: 'unknown', storeDatabase: 'postgres' });
}
