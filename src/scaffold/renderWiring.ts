import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import type { ScaffoldView } from './scaffoldView.js';
import { POSTGRES_STORE } from './stores/postgres.js';
import type { StoreModule } from './stores/types.js';
import { namedList, objectLiteral } from './houseStyle.js';
import { printModule } from './javascript/printModule.js';
import type { ModuleType } from './javascript/transpile.js';
import { propertyName } from './tsLiteral.js';

/** Every scaffold carries the in-memory store (memoryStore.ts), whatever its database. */
const MEMORY_STORE_EXPORTS = "export { MemoryIdempotencyStore, createMemoryStore } from './memoryStore.js';";

/** `IdempotencySetup.store`, the same words in TypeScript and in the JavaScript's JSDoc. */
const STORE_DOC = 'A store to use instead of the one built from `pool`, e.g. createMemoryStore() in your own tests.';

const TRIGGER_ENTRY: Record<string, string> = {
  webhook: 'createWebhookProcessor() in webhooks/',
  consumer: 'idempotentHandler() or the broker adapter in consumers/',
  cron: 'CronGuard in cron/',
};

/** What index.ts says about the design, the same in TypeScript and in JavaScript. */
/** The key helpers; newIdempotencyKey() too when a server-rendered form posts an action (views mint its key). */
function keysExport(view: ScaffoldView): string {
  const forms = view.actions.some((action) => action.keyField !== undefined);
  return `export { deriveKey, keyHint, ${forms ? 'newIdempotencyKey, ' : ''}parseIdempotencyKey, providerKeyBase } from './keys.js';`;
}

function wiringPlan(view: ScaffoldView, framework: HttpFramework, store: StoreModule) {
  const http = view.actions.filter((action) => action.http);
  const others = view.actions.filter((action) => !action.http);
  // Wrappers by action name accept only the HTTP actions, so a webhook cannot be wrapped as a route by mistake.
  const wrappers = framework.wrappers && http.length > 0 ? framework.wrappers : undefined;
  const httpActions =
    wrappers && others.length > 0
      ? `/** The actions whose entry point is an HTTP route (the others are wired as TRIGGERS.md shows). */\n${objectLiteral('', 'const HTTP_ACTIONS = ', http.map((action) => `${propertyName(action.codeName)}: ACTIONS.${action.codeName}`), ';')}`
      : undefined;
  return {
    wiring: store.wiring,
    module: framework.module,
    optionsType: framework.optionsType,
    http,
    others,
    middleware: http.map((action) => `    ${propertyName(action.codeName)}: idempotent(ACTIONS.${action.codeName}, options),`).join('\n'),
    wrappers,
    wrapperActions: others.length === 0 ? 'ACTIONS' : 'HTTP_ACTIONS',
    httpActions,
    triggerNote:
      others.length > 0
        ? `    // Not HTTP routes, so no middleware here: ${others.map((action) => `${action.codeName} (${action.trigger}) goes through ${TRIGGER_ENTRY[action.trigger] ?? 'its processor'}`).join('; ')}, with \`core\` (TRIGGERS.md).\n`
        : '',
  };
}

/**
 * index.ts: builds the store, core and one middleware per HTTP action; the only file most apps import. Webhooks,
 * consumers and scheduled jobs get no middleware here: their entry points (TRIGGERS.md) take `core` and key on
 * what the sender carries, so an Idempotency-Key entry for them would reject every real delivery. Printed in the
 * house style (prettier's layout), so generate need not format it.
 */
export function renderWiring(view: ScaffoldView, framework: HttpFramework = EXPRESS, store: StoreModule = POSTGRES_STORE): string {
  const { wiring, module, optionsType, http, others, middleware, wrappers, wrapperActions, httpActions, triggerNote } = wiringPlan(view, framework, store);
  const httpActionsDecl = httpActions ? `\n${httpActions}\n` : '';
  return `${wiring.poolImport}
import { IdempotencyCore } from './core.js';
${namedList('import', [...(http.length > 0 ? ['idempotent'] : []), ...(wrappers ? [wrappers] : []), `type ${optionsType}`], `./${module}.js`)}
${wiring.imports}
import { ACTIONS, POLICY } from './settings.js';
import type { IdempotencyEvents, IdempotencyStore } from './types.js';

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
${keysExport(view)}
export { identifyRequest } from './identify.js';
${wiring.exports}
${MEMORY_STORE_EXPORTS}
export { ACTIONS, POLICY } from './settings.js';
export {
  LeaseLostError,
  OutcomeUnknownError,
  StoreUnavailableError,
  type IdempotencyContext,
  type IdempotencyStore,
} from './types.js';
${httpActionsDecl}
export interface IdempotencySetup {
${wiring.poolDoc}  readonly pool: ${wiring.poolType};
${http.length > 0 ? '' : '  /** Used by HTTP routes only; this design has none (webhook, consumer and cron keys carry no principal). */\n'}  readonly principal${http.length > 0 ? '' : '?'}: ${optionsType}['principal'];
  /** e.g. createIdempotencyMetrics() from ./metrics.js */
  readonly events?: IdempotencyEvents;
  /** ${STORE_DOC} */
  readonly store?: IdempotencyStore | undefined;
}

/** One call wires everything: mount the returned middleware on the matching routes${others.length > 0 ? '; hand `core` to the trigger processors' : ''}. */
export function createIdempotency(setup: IdempotencySetup) {
${wiring.build}
  const core = new IdempotencyCore(setup.store ?? store, POLICY, setup.events);
${http.length > 0 ? `  const options: ${optionsType} = { core, principal: setup.principal };\n` : ''}${wiring.saga}
  return {
    core,
    saga,
${triggerNote}${middleware}${wrappers ? `\n    ...${wrappers}(options, ${wrapperActions}),` : ''}${middleware === '' ? '' : '\n'}  };
}
`;
}

/**
 * index.ts as JavaScript, as the compiler (types to JSDoc) and prettier would give it: type-only imports and
 * specifiers dropped, each re-exported type a @typedef above its export, IdempotencySetup a @typedef with its
 * property docs, and value imports the code does not use elided, as the compiler elides them.
 */
export function renderWiringJavaScript(view: ScaffoldView, framework: HttpFramework, store: StoreModule, moduleType: ModuleType): string {
  const { wiring, module, optionsType, http, others, middleware, wrappers, wrapperActions, httpActions, triggerNote } = wiringPlan(view, framework, store);
  const httpActionsDecl = httpActions ? `\n\n${httpActions}` : '';
  // Where each type named in the wiring comes from, for `import('…').Name`.
  const typeHome = new Map<string, string>([
    [optionsType, `./${module}.js`],
    ['IdempotencyEvents', './types.js'],
    ['IdempotencyStore', './types.js'],
  ]);
  for (const statement of statementsOf(wiring.poolImport)) for (const name of statement.types) typeHome.set(name, statement.from);
  const typeOf = (names: string) => names.replace(/[A-Za-z_$][\w$]*/g, (name) => (typeHome.has(name) ? `import('${typeHome.get(name)}').${name}` : name));
  const frameworkValues = [...(http.length > 0 ? ['idempotent'] : []), ...(wrappers ? [wrappers] : [])];
  const imports = [
    "import { IdempotencyCore } from './core.js';",
    ...(frameworkValues.length > 0 ? [namedList('import', frameworkValues, `./${module}.js`)] : []),
    wiring.imports,
    namedList('import', [...(http.length > 0 ? ['ACTIONS'] : []), 'POLICY'], './settings.js'),
  ];
  const reexports = [
    `export { ActiveClaim, IdempotencyCore, InFlightError, MismatchError, NotReplayableError, TransactionalClaim, isStorable, type Claim } from './core.js';`,
    `export { ${framework.exports} } from './${module}.js';`,
    "export { computeFingerprint, fingerprintsEqual, pickFields } from './fingerprint.js';",
    keysExport(view),
    "export { identifyRequest } from './identify.js';",
    wiring.exports,
    MEMORY_STORE_EXPORTS,
    "export { ACTIONS, POLICY } from './settings.js';",
    "export { LeaseLostError, OutcomeUnknownError, StoreUnavailableError, type IdempotencyContext, type IdempotencyStore } from './types.js';",
  ]
    .flatMap((text) => statementsOf(text))
    .map((statement, index) => {
      const typedefs = statement.types.map((name) => `@typedef {import('${statement.from}').${name}} ${name}`);
      const doc = typedefs.length === 0 ? '' : typedefs.length === 1 ? `/** ${typedefs[0]} */\n` : `/**\n${typedefs.map((line) => ` * ${line}\n`).join('')} */\n`;
      // The first re-export's types are written where the imports end, above the blank line.
      return `${index === 0 ? `${doc}\n` : doc}${namedList('export', statement.values, statement.from)}`;
    });
  const poolDoc = /\/\*\* (.*) \*\//.exec(wiring.poolDoc)?.[1];
  const properties = [
    `@property {${typeOf(wiring.poolType)}} pool${poolDoc ? ` ${poolDoc}` : ''}`,
    `@property {${typeOf(`${optionsType}['principal']`)}} ${http.length > 0 ? 'principal' : '[principal] Used by HTTP routes only; this design has none (webhook, consumer and cron keys carry no principal).'}`,
    `@property {${typeOf('IdempotencyEvents')}} [events] e.g. createIdempotencyMetrics() from ./metrics.js`,
    `@property {${typeOf('IdempotencyStore | undefined')}} [store] ${STORE_DOC}`,
  ];
  const esm = `${imports.join('\n')}
${reexports.join('\n')}${httpActionsDecl}
/**
 * @typedef {object} IdempotencySetup
${properties.map((line) => ` * ${line}\n`).join('')} */

/**
 * One call wires everything: mount the returned middleware on the matching routes${others.length > 0 ? '; hand `core` to the trigger processors' : ''}.
 *
 * @param {IdempotencySetup} setup
 */
export function createIdempotency(setup) {
${wiring.build}
  const core = new IdempotencyCore(setup.store ?? store, POLICY, setup.events);
${http.length > 0 ? `  /** @type {${typeOf(optionsType)}} */\n  const options = { core, principal: setup.principal };\n` : ''}${wiring.saga}
  return {
    core,
    saga,
${triggerNote}${middleware}${wrappers ? `\n    ...${wrappers}(options, ${wrapperActions}),` : ''}${middleware === '' ? '' : '\n'}  };
}
`;
  return printModule(esm, moduleType);
}

/** `import`/`export { a, type B } from 'm';` statements (one or several lines each) → their value and type names. */
function statementsOf(text: string): Array<{ values: string[]; types: string[]; from: string }> {
  const out: Array<{ values: string[]; types: string[]; from: string }> = [];
  for (const match of text.matchAll(/^(?:import|export)(?: type)? \{([^}]*)\} from '([^']+)';$/gm)) {
    const typeOnly = match[0].startsWith('import type') || match[0].startsWith('export type');
    const names = match[1]!.split(',').map((name) => name.trim()).filter(Boolean);
    out.push({
      values: typeOnly ? [] : names.filter((name) => !name.startsWith('type ')),
      types: names.filter((name) => typeOnly || name.startsWith('type ')).map((name) => name.replace(/^type /, '')),
      from: match[2]!,
    });
  }
  return out;
}
