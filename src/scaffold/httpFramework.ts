import type { ActionView, ScaffoldView } from './scaffoldView.js';

/**
 * What differs between HTTP frameworks in the generated wiring, README and test suite. The runtime itself (core,
 * store, fingerprint, keys, problems, saga, cleanup, metrics) is shared; each framework adds one adapter template.
 */
export interface HttpFramework {
  /** The adapter module in the scaffold folder, without extension: './<module>.js'. */
  readonly module: string;
  /** The adapter's options type, whose `principal` createIdempotency() takes. */
  readonly optionsType: string;
  /** What index.ts re-exports from the adapter module. */
  readonly exports: string;
  /**
   * An adapter export `(options, ACTIONS) => object` whose members createIdempotency() also returns, for wrappers
   * addressed by action name (Next.js: `withIdempotency('createPayment', handler)`).
   */
  readonly wrappers?: string;
  readonly readme: {
    /** Step 2 of the wiring: how to mount, then the code block (at most 15 lines). */
    readonly mount: string;
    /** The request parameter's usual name in this framework's handlers. */
    readonly requestName: string;
    /** The README's principal resolver, when `(req) => req.user?.id` is not how this framework reaches the user. */
    readonly principal?: string;
    /** `pool`: the store's createPool(…) call in the README's language (stores/poolExpression.ts). */
    code(view: ScaffoldView, principalLine: string, pool: string): string;
    /** Where a multi-step handler finds the claim for `saga.run`. */
    readonly claimHint: string;
  };
  /**
   * The same adapter for a project on another HTTP platform (NestJS on @nestjs/platform-fastify): its own suite
   * boots that platform. Undefined: the one suite serves every platform.
   */
  readonly platforms?: { readonly fastify?: () => HttpFramework };
  readonly tests: {
    /** Import lines between node:fs and pg. */
    readonly imports: string;
    /** The declaration of whatever the suite closes in afterAll. */
    readonly serverDecl: string;
    /** beforeAll after the migration: build the app on the generated hooks, listen, set baseUrl. */
    setup(action: ActionView, method: string): string;
    readonly teardown: string;
    /**
     * The suite's app parses urlencoded bodies as a server-rendered form app does (a repeated field as an array), so
     * the suite also posts the key in the action's form field (`key.field`).
     */
    readonly forms?: boolean;
  };
}
