import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import type { ScaffoldView } from './scaffoldView.js';
import { POSTGRES_STORE } from './stores/postgres.js';
import type { StoreModule } from './stores/types.js';
import { namedList, objectLiteral } from './houseStyle.js';
import { propertyName } from './tsLiteral.js';

const TRIGGER_ENTRY: Record<string, string> = {
  webhook: 'createWebhookProcessor() in webhooks/',
  consumer: 'idempotentHandler() or the broker adapter in consumers/',
  cron: 'CronGuard in cron/',
};

/**
 * index.ts: builds the store, core and one middleware per HTTP action; the only file most apps import. Webhooks,
 * consumers and scheduled jobs get no middleware here: their entry points (TRIGGERS.md) take `core` and key on
 * what the sender carries, so an Idempotency-Key entry for them would reject every real delivery. Printed in the
 * house style (prettier's layout), so generate need not format it.
 */
export function renderWiring(view: ScaffoldView, framework: HttpFramework = EXPRESS, store: StoreModule = POSTGRES_STORE): string {
  const { wiring } = store;
  const { module, optionsType } = framework;
  const http = view.actions.filter((action) => action.http);
  const others = view.actions.filter((action) => !action.http);
  const middleware = http.map((action) => `    ${propertyName(action.codeName)}: idempotent(ACTIONS.${action.codeName}, options),`).join('\n');
  // Wrappers by action name accept only the HTTP actions, so a webhook cannot be wrapped as a route by mistake.
  const wrappers = framework.wrappers && http.length > 0 ? framework.wrappers : undefined;
  const wrapperActions = others.length === 0 ? 'ACTIONS' : 'HTTP_ACTIONS';
  const httpActionsDecl =
    wrappers && others.length > 0
      ? `\n/** The actions whose entry point is an HTTP route (the others are wired as TRIGGERS.md shows). */\n${objectLiteral('', 'const HTTP_ACTIONS = ', http.map((action) => `${propertyName(action.codeName)}: ACTIONS.${action.codeName}`), ';')}\n`
      : '';
  const triggerNote =
    others.length > 0
      ? `    // Not HTTP routes, so no middleware here: ${others.map((action) => `${action.codeName} (${action.trigger}) goes through ${TRIGGER_ENTRY[action.trigger] ?? 'its processor'}`).join('; ')}, with \`core\` (TRIGGERS.md).\n`
      : '';
  return `${wiring.poolImport}
import { IdempotencyCore } from './core.js';
${namedList('import', [...(http.length > 0 ? ['idempotent'] : []), ...(wrappers ? [wrappers] : []), `type ${optionsType}`], `./${module}.js`)}
${wiring.imports}
import { ACTIONS, POLICY } from './settings.js';
import type { IdempotencyEvents } from './types.js';

export {
  ActiveClaim,
  IdempotencyCore,
  InFlightError,
  MismatchError,
  NotReplayableError,
  TransactionalClaim,
  isStorable,
  type Claim,
} from './core.js';
${namedList('export', framework.exports.split(', '), `./${module}.js`)}
export { computeFingerprint, fingerprintsEqual, pickFields } from './fingerprint.js';
export { deriveKey, keyHint, parseIdempotencyKey, providerKeyBase } from './keys.js';
export { identifyRequest } from './identify.js';
${wiring.exports}
export { ACTIONS, POLICY } from './settings.js';
export {
  LeaseLostError,
  OutcomeUnknownError,
  StoreUnavailableError,
  type IdempotencyContext,
} from './types.js';
${httpActionsDecl}
export interface IdempotencySetup {
${wiring.poolDoc}  readonly pool: ${wiring.poolType};
${http.length > 0 ? '' : '  /** Used by HTTP routes only; this design has none (webhook, consumer and cron keys carry no principal). */\n'}  readonly principal${http.length > 0 ? '' : '?'}: ${optionsType}['principal'];
  /** e.g. createIdempotencyMetrics() from ./metrics.js */
  readonly events?: IdempotencyEvents;
}

/** One call wires everything: mount the returned middleware on the matching routes${others.length > 0 ? '; hand `core` to the trigger processors' : ''}. */
export function createIdempotency(setup: IdempotencySetup) {
${wiring.build}
  const core = new IdempotencyCore(store, POLICY, setup.events);
${http.length > 0 ? `  const options: ${optionsType} = { core, principal: setup.principal };\n` : ''}${wiring.saga}
  return {
    core,
    saga,
${triggerNote}${middleware}${wrappers ? `\n    ...${wrappers}(options, ${wrapperActions}),` : ''}${middleware === '' ? '' : '\n'}  };
}
`;
}
