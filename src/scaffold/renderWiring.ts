import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import type { ScaffoldView } from './scaffoldView.js';
import { propertyName } from './tsLiteral.js';

/** index.ts: builds the store, core and one middleware per HTTP action; the only file most apps import. */
export function renderWiring(view: ScaffoldView, framework: HttpFramework = EXPRESS): string {
  const { module, optionsType } = framework;
  const http = view.actions.filter((action) => action.http);
  const middleware = http.map((action) => `    ${propertyName(action.codeName)}: idempotent(ACTIONS.${action.codeName}, options),`).join('\n');
  return `import type { Pool } from 'pg';
import { IdempotencyCore } from './core.js';
import { idempotent, ${framework.wrappers ? `${framework.wrappers}, ` : ''}type ${optionsType} } from './${module}.js';
import { PgIdempotencyStore } from './pgStore.js';
import { SagaTracker } from './saga.js';
import { ACTIONS, POLICY } from './settings.js';
import type { IdempotencyEvents } from './types.js';

export { ActiveClaim, IdempotencyCore, InFlightError, MismatchError, NotReplayableError, TransactionalClaim, isStorable, type Claim } from './core.js';
export { ${framework.exports} } from './${module}.js';
export { computeFingerprint, fingerprintsEqual, pickFields } from './fingerprint.js';
export { deriveKey, keyHint, parseIdempotencyKey, providerKeyBase } from './keys.js';
export { identifyRequest } from './identify.js';
export { PgIdempotencyStore } from './pgStore.js';
export { createPool, type PoolLimits } from './pool.js';
export { PermanentStepError, SagaCompensatedError, SagaTracker, type SagaStep, type StepContext } from './saga.js';
export { deleteExpiredKeys } from './cleanup.js';
export { ACTIONS, POLICY } from './settings.js';
export { LeaseLostError, OutcomeUnknownError, StoreUnavailableError, type IdempotencyContext } from './types.js';

export interface IdempotencySetup {
  readonly pool: Pool;
  readonly principal: ${optionsType}['principal'];
  /** e.g. createIdempotencyMetrics() from ./metrics.js */
  readonly events?: IdempotencyEvents;
}

/** One call wires everything: mount the returned middleware on the matching routes. */
export function createIdempotency(setup: IdempotencySetup) {
  const store = new PgIdempotencyStore({
    pool: setup.pool,
    table: POLICY.table,
    stepTable: POLICY.stepTable,
    timeoutMs: POLICY.statementTimeoutMs,
    acquireTimeoutMs: POLICY.acquireTimeoutMs,
    lockTimeoutMs: POLICY.lockTimeoutMs,
  });
  const core = new IdempotencyCore(store, POLICY, setup.events);
  const options: ${optionsType} = { core, principal: setup.principal };
  const saga = new SagaTracker({ pool: setup.pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: POLICY.storeTimeoutMs });
  return {
    core,
    saga,
${middleware}${framework.wrappers ? `\n    ...${framework.wrappers}(options, ACTIONS),` : ''}
  };
}
`;
}
