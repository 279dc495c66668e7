import type { StackDesign } from '../../model/types.js';
import { httpTarget } from '../httpTarget.js';
import { MYSQL_STORE, REDIS_STORE, SQLITE_STORE, type StoreModule } from '../stores/index.js';
import type { HttpFramework } from '../httpFramework.js';
import type { StaticFile } from '../typescriptRuntime.js';
import type { ScaffoldTarget } from '../types.js';
import { EXPRESS_ADAPTER } from './expressPostgres.js';
import { FASTIFY_ADAPTER } from './fastifyPostgres.js';

/**
 * Express and Fastify on every store besides PostgreSQL (TypeScript). The agnostic design keeps the PostgreSQL
 * reference its document describes.
 */
interface Adapter {
  readonly name: string;
  readonly framework: HttpFramework;
  readonly adapter: StaticFile;
  readonly wiringPurpose?: string;
}

function on(adapter: Adapter, store: StoreModule): ScaffoldTarget {
  return httpTarget(
    {
      ...adapter,
      id: `typescript-${adapter.framework.module}-${store.id}`,
      label: `${adapter.name} + ${store.label} (TypeScript)`,
      supports: (stack: StackDesign) =>
        stack.framework === adapter.framework.module && store.serves.includes(stack.storeDatabase) && stack.language === 'typescript' && !stack.agnostic,
    },
    store,
  );
}

export const STORE_TARGETS: readonly ScaffoldTarget[] = [MYSQL_STORE, SQLITE_STORE, REDIS_STORE].flatMap((store) => [on(EXPRESS_ADAPTER, store), on(FASTIFY_ADAPTER, store)]);
