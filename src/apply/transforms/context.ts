import type { SourceFile } from 'ts-morph';
import type { Edit, ImportStyle, ManualStep, WiringTarget } from '../types.js';
import type { RouteAuthenticationOf } from '../routeAuthentication.js';

export interface TransformContext {
  style: ImportStyle;
  /** The file is exactly what the last apply wrote: the recorded line may have moved by the lines apply added. */
  anyLine: boolean;
  /** Generated modules present in the scaffold folder (e.g. 'providers', 'next'), so no import points at nothing. */
  scaffoldModules: ReadonlySet<string>;
  /**
   * For GraphQL resolvers: the project's GraphQL server package (graphql-yoga, @apollo/server, …), the key header, and
   * (Apollo) the property its context function puts the request in.
   */
  graphql?: { server?: string; header: string; requestProperty?: string };
  /**
   * For routing-controllers methods (routingControllersMethod.ts): the key header, and whether the project configures
   * a currentUserChecker (so an added `@CurrentUser()` parameter gets the caller).
   */
  routingControllers?: { header: string; currentUserChecker: boolean };
  /**
   * Express, Koa, Fastify, Hono: what authenticates a target's route, as the inspection read it (its own middleware,
   * its router's before it, its mount's, framework hooks); undefined when that reading was not made.
   */
  routeAuthentication?: RouteAuthenticationOf;
  /**
   * Request properties the project's middleware puts a verified Stripe event on (`ctx.state.stripeEvent = event` after
   * `stripe.webhooks.constructEvent`): a webhook handler that reads one has had its delivery verified before it runs.
   */
  verifiedEvents?: ReadonlySet<string>;
}

export interface TransformOutcome {
  edits: Edit[];
  manual: ManualStep[];
  /** The file no longer matches the inspection: apply refuses to guess. */
  stale?: string;
  /** How the handler reads the caller's id (['auth', 'user', 'id']), for the instance's principal. */
  principal?: string[];
}

/** One transform: edits the parsed file in place for one action. Idempotent: a wired file yields no edit. */
export type Transform = (sf: SourceFile, target: WiringTarget, context: TransformContext) => TransformOutcome;

export const manualOnly = (target: WiringTarget, reason: string, line = target.line): TransformOutcome => ({
  edits: [],
  manual: [{ action: target.action, file: target.file, line, reason }],
});

/** How clientKeyStep's reason starts: the client pass (clientCallers.ts) replaces the step where it found the callers. */
export const CLIENT_KEY_STEP = 'callers must now send an Idempotency-Key header';

/**
 * A client-keyed route answers 400 to a request without the key header once wired: the callers (browser forms,
 * fetch wrappers, other services) must send one key per user intent and reuse it on retry. apply edits the callers
 * it finds in the repository's React components (clientCallers.ts); where it finds none, this step stays, to be
 * shipped before or with the server change.
 */
export const clientKeyStep = (target: WiringTarget): ManualStep[] =>
  (target.keySource === 'client' || target.keySource === 'server') && target.keyField === undefined && target.trigger === 'http'
    ? [{ action: target.action, file: target.file, line: target.line, reason: `${CLIENT_KEY_STEP} (one per user intent, reused on retry); requests without it are answered 400, so ship the client change first` }]
    : [];

