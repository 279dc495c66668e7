import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import type { ScaffoldView } from './scaffoldView.js';
import { POSTGRES_STORE } from './stores/postgres.js';
import type { StoreModule } from './stores/types.js';
import { propertyName } from './tsLiteral.js';

/** index.ts: builds the store, core and one middleware per HTTP action; the only file most apps import. */
export function renderWiring(view: ScaffoldView, framework: HttpFramework = EXPRESS, store: StoreModule = POSTGRES_STORE): string {
  const { wiring } = store;
  const { module, optionsType } = framework;
  const http = view.actions.filter((action) => action.http);
  const middleware = http.map((action) => `    ${propertyName(action.codeName)}: idempotent(ACTIONS.${action.codeName}, options),`).join('\n');
  return `${wiring.poolImport}
import { IdempotencyCore } from './core.js';
import { idempotent, ${framework.wrappers ? `${framework.wrappers}, ` : ''}type ${optionsType} } from './${module}.js';
${wiring.imports}
import { ACTIONS, POLICY } from './settings.js';
import type { IdempotencyEvents } from './types.js';

export { ActiveClaim, IdempotencyCore, InFlightError, MismatchError, NotReplayableError, TransactionalClaim, isStorable, type Claim } from './core.js';
export { ${framework.exports} } from './${module}.js';
export { computeFingerprint, fingerprintsEqual, pickFields } from './fingerprint.js';
export { deriveKey, keyHint, parseIdempotencyKey, providerKeyBase } from './keys.js';
export { identifyRequest } from './identify.js';
${wiring.exports}
export { ACTIONS, POLICY } from './settings.js';
export { LeaseLostError, OutcomeUnknownError, StoreUnavailableError, type IdempotencyContext } from './types.js';

export interface IdempotencySetup {
${wiring.poolDoc}  readonly pool: ${wiring.poolType};
  readonly principal: ${optionsType}['principal'];
  /** e.g. createIdempotencyMetrics() from ./metrics.js */
  readonly events?: IdempotencyEvents;
}

/** One call wires everything: mount the returned middleware on the matching routes. */
export function createIdempotency(setup: IdempotencySetup) {
${wiring.build}
  const core = new IdempotencyCore(store, POLICY, setup.events);
  const options: ${optionsType} = { core, principal: setup.principal };
${wiring.saga}
  return {
    core,
    saga,
${middleware}${framework.wrappers ? `\n    ...${framework.wrappers}(options, ACTIONS),` : ''}
  };
}
`;
}
