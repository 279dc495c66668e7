import type { Config, Database } from '../config/schema.js';
import { httplessKinds, noHttpRoute } from './httplessActions.js';
import { BROKER_LABELS, DATABASE_LABELS, FRAMEWORK_LABELS, TEST_FRAMEWORK_LABELS, isPagesApiFile } from './labels.js';
import { STORE_FACTS } from './storeFacts.js';
import { isWorkerOnly } from './workerOutcomes.js';
import type { StackDesign } from './types.js';

export function buildStack(config: Config): { stack: StackDesign; assumptions: string[] } {
  const assumptions: string[] = [];
  const s = config.stack;
  // A worker (consumers and cron jobs only) is described by its consumer and slot outcomes, not the wrapper's throws.
  const worker = isWorkerOnly(config.actions);
  const plainWrapper = s.framework === 'unknown' && noHttpRoute(config.actions);
  const plain = plainWrapper && !worker;
  const agnostic = s.database === 'unknown' || s.framework === 'unknown' || s.language === 'unknown';
  if (s.language === 'unknown') assumptions.push('The language was not given: code is shown in TypeScript and needs translating to your language.');
  if (plainWrapper) assumptions.push(`The framework was not given, and no action is a plain HTTP route (they are ${httplessKinds(config.actions)}): the code is the plain idempotent(fn) wrapper, which your resolvers, procedures and handlers call, with no HTTP framework.`);
  else if (s.framework === 'unknown') assumptions.push('The framework was not given: the middleware is written against a minimal request/response interface and needs an adapter for your framework.');
  if (s.database === 'unknown') assumptions.push('The database was not given: the design uses the PostgreSQL reference schema; for a non-relational store, redesign from the logical model (key, fingerprint, status, lease, response, expiry) rather than translating the DDL.');
  const storeDatabase: Database = s.database === 'unknown' ? 'postgres' : s.database;
  const facts = STORE_FACTS[storeDatabase];
  return {
    stack: {
      language: s.language === 'javascript' ? 'javascript' : 'typescript',
      framework: s.framework,
      database: s.database,
      broker: s.broker,
      testFramework: s.testFramework,
      agnostic,
      ...(agnostic ? { unknownParts: (['language', 'framework', 'database'] as const).filter((part) => s[part] === 'unknown') } : {}),
      frameworkLabel: s.framework === 'nextjs' ? nextLabel(config.actions) : FRAMEWORK_LABELS[s.framework],
      databaseLabel: DATABASE_LABELS[s.database],
      brokerLabel: BROKER_LABELS[s.broker] ?? s.broker,
      testFrameworkLabel: TEST_FRAMEWORK_LABELS[s.testFramework] ?? s.testFramework,
      storeDatabase,
      storeKind: facts.kind,
      claimPrimitive: facts.claimPrimitive,
      claimIn: facts.claimIn,
      transactional: facts.transactional,
      ...(facts.duplicateWaitsOn ? { duplicateWaitsOn: facts.duplicateWaitsOn } : {}),
      ...(plain ? { plain: true as const } : {}),
      ...(worker ? { worker: true as const } : {}),
    },
    assumptions,
  };
}

/** What a Next.js app's HTTP actions are: route handlers, Server Actions, or both. */
function nextLabel(actions: readonly { trigger: string; transport?: string; source?: string }[]): string {
  const http = actions.filter((a) => a.trigger === 'http' || a.trigger === 'webhook');
  const actionsOnly = http.filter((a) => a.transport === 'server-action');
  if (actionsOnly.length === http.length && http.length > 0) return 'Next.js Server Actions';
  // The Pages Router calls its pages/api handlers API routes; "route handlers" are the App Router's route.ts.
  const routes = http.filter((a) => a.transport !== 'server-action');
  const pages = routes.filter((a) => isPagesApiFile(a.source)).length;
  const kinds = pages === 0 ? 'route handlers' : pages === routes.length ? 'API routes' : 'route handlers and API routes';
  return actionsOnly.length === 0 ? (pages === 0 ? FRAMEWORK_LABELS.nextjs : `Next.js ${kinds}`) : `Next.js ${kinds} and Server Actions`;
}
