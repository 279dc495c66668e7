import type { Database } from '../../config/schema.js';
import type { ModuleType } from '../javascript/transpile.js';
import type { ScaffoldView } from '../scaffoldView.js';
import type { StaticFile } from '../typescriptRuntime.js';

/**
 * One idempotency store (database + driver) the scaffold can target, against the one IdempotencyStore interface.
 * Composed with an HTTP framework by httpTarget(); adding a store = one module here + one line in stores/index.ts
 * + one line in the contract-suite matrix (test/scaffold/storeContract).
 */
export interface StoreModule {
  readonly id: 'postgres' | 'mysql' | 'sqlite' | 'libsql' | 'redis' | 'dynamodb';
  /** For labels and messages, e.g. "MySQL/MariaDB". */
  readonly label: string;
  /** What the generated suites run on, when it is not "a real <label>" (libSQL: a local file, not a Turso server). */
  readonly testTarget?: string;
  /** The `stack.storeDatabase` values it serves. */
  readonly serves: readonly Database[];
  /** Store-specific runtime files copied verbatim (store, connection helper, saga, cleanup). */
  readonly files: readonly StaticFile[];
  /** The DDL, in this database's dialect; none for stores without a schema (Redis). */
  readonly migration?: { readonly path: string; readonly purpose: string; render(view: ScaffoldView): string };
  /**
   * cleanup-job.ts (with `javascript`, printed as JavaScript in that module format); none when the store expires
   * records itself (Redis TTL).
   */
  readonly cleanupJob?: (view: ScaffoldView, javascript?: ModuleType) => string;
  /** Without a cleanup job: the file the document shows for expiry instead (DynamoDB's table.ts turns TTL on). */
  readonly expiryFile?: string;
  /** Whether claimInTransaction exists: without it every action runs in lease mode. */
  readonly transactional: boolean;
  /** npm packages the generated code imports (runtime, then dev). */
  readonly dependencies: { readonly runtime: readonly string[]; readonly dev: readonly string[] };
  readonly wiring: StoreWiring;
  readonly readme: StoreReadme;
  readonly tests: StoreTestHooks;
  /** store-contract.test.ts: the shipped contract suite pointed at this store. */
  renderContractTest(view: ScaffoldView): string;
}

/** What index.ts needs: the connection type createIdempotency() takes as `pool`, and how the store is built. */
export interface StoreWiring {
  /** The first import line: the connection type `pool` has. */
  readonly poolImport: string;
  /** Import lines for the store and saga classes (after the adapter's import). */
  readonly imports: string;
  /** Re-exports of the store module, its connection helper, saga and cleanup. */
  readonly exports: string;
  /** The type of `setup.pool`. */
  readonly poolType: string;
  /** JSDoc for `pool`, or '' for none. */
  readonly poolDoc: string;
  /** Statements building `store` from `setup.pool`; two-space indented. */
  readonly build: string;
  /** The statement building `saga` (after `options`). */
  readonly saga: string;
}

export interface StoreReadme {
  /** Wiring step 1: how to create the store's tables (or why there are none). */
  readonly migrationStep: string;
  /** Why every action runs in lease mode, for a store whose database has transactions it does not share with the handler. */
  readonly leaseOnly?: string;
  /** The bullet on a store that is down or slow. */
  readonly limits: (view: ScaffoldView) => string;
  /** The bullet on retention and cleanup. */
  readonly retention: (view: ScaffoldView) => string;
  /** The Tests section's text, around the project's runner command (with the suites it runs). */
  readonly tests: (command: string) => string;
  /** How the Metrics section feeds observeStore when the scaffold ships the store's sample; else the user writes one. */
  readonly storeSample?: string;
}

/**
 * What differs between stores in idempotency.test.ts (renderTests): the suite's structure and scenarios are shared,
 * these fragments set up a throwaway store and look at its records. Every fragment sees `pool` (the connection
 * createIdempotency takes), `executions`, `ACTION`, `POLICY` and the suite's helpers.
 */
export interface StoreTestHooks {
  /** Import line(s) for the driver, where `import pg from 'pg';` stands for PostgreSQL. */
  readonly driverImport: string;
  /** Import line for the store class. */
  readonly storeImport: string;
  /** Module-level lines deciding whether the suite can run (reads the environment, warns when it cannot). */
  readonly gate: string;
  /** `import { readFileSync } from 'node:fs';\n` when the suite reads the migration, else empty. */
  readonly fsImport: string;
  /** The expression for describe.skipIf. */
  readonly skipIf: string;
  /** Declarations at the top of the describe block (must declare `pool`). */
  readonly declarations: string;
  /** beforeAll before the framework's setup: create the throwaway store, its tables and `test_effects`. */
  /** `migration` is an expression for the migration file's path (or URL), for readFileSync. */
  setup(migration: string): string;
  /** afterAll after the framework's teardown. */
  readonly teardown: string;
  /** recordEffect(context) and effects(id), with their comments. */
  readonly effectHelpers: string;
  /** recordKey(id): the (scope, key) of the record a test id produced. */
  readonly recordKeyHelper: string;
  /** Statements asserting that at least one finished record exists. */
  readonly assertFinished: string;
  /** Statements making the record (scope, key) expired. */
  readonly expireRecord: string;
  /** The crash scenario for transactional actions (a whole `it`). */
  readonly crashTransactional: string;
  /** The crash scenario for lease-mode actions (a whole `it`). */
  readonly crashLease: string;
  /** `new XStore({ ... })` with the given time-out expression. */
  newStore(timeoutMs: string): string;
  /** `new SagaTracker({ ... })`. */
  readonly newSaga: string;
  /** Statements asserting the record with key `key` is still PROCESSING under a live lease. */
  readonly assertStillProcessing: string;
}
