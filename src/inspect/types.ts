/**
 * The inspection contract: plain, JSON-serialisable data. Other rooms (questions, model, CLI) depend on this exact
 * shape, so nothing from ts-morph or the TypeScript compiler ever appears here.
 */

export type Language = 'typescript' | 'javascript' | 'unknown';
export type TestFramework = 'vitest' | 'jest' | 'node-test' | 'mocha' | 'tap' | 'ava' | 'playwright' | 'unknown';
export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun' | 'unknown';

export interface StackFacts {
  language: Language;
  /** e.g. 'express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs' */
  frameworks: string[];
  /** e.g. 'postgres', 'mysql', 'mongodb', 'redis', 'dynamodb', 'sqlite' */
  databases: string[];
  /** e.g. 'prisma', 'drizzle', 'typeorm', 'knex', 'sequelize', 'mongoose', 'pg', 'postgres.js', 'mysql2', 'ioredis' */
  orms: string[];
  /** e.g. 'bullmq', 'kafka', 'rabbitmq', 'sqs', 'nats' */
  brokers: string[];
  testFramework: TestFramework;
  packageManager: PackageManager;
  /** e.g. 'stripe', 'adyen', 'paypal' */
  payments: string[];
  /**
   * How the project connects to its PostgreSQL / MySQL database, where it creates its client: at most one per kind,
   * present only when found. The applied store's pool reads the same environment variables.
   */
  connections?: StoreConnection[];
  /**
   * What authenticates callers: declared auth packages (passport, jsonwebtoken, next-auth, @clerk/…) and code that
   * does (`file (sets req.user)`). Empty when the code was read and nothing authenticates; absent when no source
   * file was read, so nothing is known.
   */
  authentication?: string[];
  /** Present for monorepos: one entry per workspace package, `dir` relative to the root. */
  packages?: Array<{ dir: string; name: string; stack: Omit<StackFacts, 'packages' | 'root'> }>;
  /**
   * Present for monorepos whose root holds source files of its own beside the packages (an app in `src/` with a
   * service in `event-service/`): the root package's own facts, where the rest of this object is the union.
   */
  root?: Omit<StackFacts, 'packages' | 'root'>;
}

/** The databases whose connection apply's instance can copy from the project: PostgreSQL and MySQL (inspected), Redis (read by apply). */
export type ConnectionStore = 'postgres' | 'mysql' | 'redis';

/**
 * The environment variables a project's database client reads (names only, each matching /^[A-Za-z_][A-Za-z0-9_]*$/):
 * a connection URL, or host and the other parts, with the place the client is created.
 */
export interface StoreConnection {
  store: ConnectionStore;
  url?: string;
  host?: string;
  port?: string;
  user?: string;
  password?: string;
  database?: string;
  /** Relative to the inspected root, POSIX slashes. */
  file: string;
  /** 1-based. */
  line: number;
}

export type FindingKind = 'endpoint' | 'payment' | 'webhook' | 'consumer' | 'cron' | 'existing-idempotency';

interface FindingBase {
  kind: FindingKind;
  id: string;
  /** Relative to the inspected root, POSIX slashes. */
  file: string;
  /** 1-based. */
  line: number;
  /** Workspace package name, for monorepos. */
  package?: string;
}

/** GET appears only for a route whose handler moves money or creates a billable object at a provider. */
export type HttpMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ALL' | 'GET';

export interface EndpointFinding extends FindingBase {
  kind: 'endpoint';
  method: HttpMethod;
  path: string;
  framework: string;
  handler?: string;
  /** An inline handler that hands the request to one service method: that method's name (it names the action). */
  delegate?: string;
  /** False when a mount prefix (router mount, plugin prefix, global prefix) could not be determined statically. */
  prefixResolved: boolean;
  bodyFields?: string[];
  touchesPayment?: boolean;
  /** The handler, or a function it calls, inserts a row or document: the endpoint creates a resource. */
  insertsRecord?: boolean;
  /** The handler answers with a stream (server-sent events, an AI SDK stream response): its answer cannot be stored whole. */
  streamsResponse?: true;
  /**
   * The handler, or a function it calls, sends an e-mail, SMS or push notification: the libraries it sends through
   * (`nodemailer`, `twilio`, …). A duplicate reaches a person twice.
   */
  sendsMessage?: string[];
  /**
   * The handler, or a function it calls, publishes to a message broker (`kafka`, `rabbitmq`, `bullmq`, `sqs`): a
   * duplicate publishes the event again, and every consumer of it handles it again.
   */
  publishes?: string[];
  /**
   * Absent for declared HTTP routes. A Server Action, tRPC procedure or GraphQL mutation (every one of which arrives
   * at the one GraphQL endpoint) is a POST whose URL the code does not state: `path` is then the action, procedure or
   * mutation (`/createInvoice`, `/billing.refund`, `/addPet`) and `prefixResolved` is false.
   */
  transport?: 'server-action' | 'trpc' | 'graphql';
  /**
   * Server-rendered forms (Pug, EJS, Handlebars, Nunjucks views) that post to this route: a browser form sends no
   * custom header, so its key has to travel in a form field. Absent when none was found.
   */
  forms?: Array<{ file: string; line: number }>;
}

export type PaymentProvider = 'stripe' | 'adyen' | 'paypal' | 'braintree' | 'square' | 'mollie' | 'paddle';

/** What repeating the call costs: moves money, creates a billable object, creates a harmless object (a session URL). */
export type PaymentRisk = 'moves-money' | 'billable-object' | 'harmless-object' | 'read';

export interface PaymentFinding extends FindingBase {
  kind: 'payment';
  provider: PaymentProvider;
  operation: string;
  hasProviderKey: boolean;
  /** The key passed is made on each call (`randomUUID()`): the SDK's own retries share it, a retried request does not. */
  keyPerAttempt?: boolean;
  enclosingFunction?: string;
  /** From the generated provider operation tables (SDK calls) or the REST path (raw HTTP). */
  risk?: PaymentRisk;
  /** HTTP verb of the provider request. */
  httpMethod?: string;
  /** Through the provider's SDK, or raw HTTP (fetch, axios, got, undici) to the provider's API. */
  via?: 'sdk' | 'http';
}

export interface WebhookFinding extends FindingBase {
  kind: 'webhook';
  provider?: string;
  verifiesSignature: boolean;
  /** True only on evidence: a store lookup or atomic claim keyed by the event id (see `dedupeEvidence`). */
  dedupesEventId: boolean;
  route?: string;
  dedupeEvidence?: DedupeEvidence;
  /** Set when no evidence was found and a claim near the id was refused because its key is made fresh per attempt. */
  perAttemptClaim?: PerAttemptClaim;
}

/** Where the code proves it deduplicates, so a reviewer can check it. */
export interface DedupeEvidence {
  file: string;
  line: number;
  detail: string;
}

/**
 * A claim that looks like dedupe but is keyed on a value made fresh per attempt (`ON CONFLICT (id)` with
 * `randomUUID()` as the id): it never conflicts, so a redelivery inserts again. Kept so a finding can say why.
 */
export interface PerAttemptClaim {
  file: string;
  /** 1-based. */
  line: number;
  /** `ON CONFLICT`, `INSERT IGNORE`, `upsert`, `SET NX`, … */
  claim: string;
  /** The fresh value as written: `randomUUID()`, `Date.now()`. */
  value: string;
}

export interface ConsumerFinding extends FindingBase {
  kind: 'consumer';
  broker: string;
  queue?: string;
  /** True only on evidence: a store lookup or atomic claim keyed by the message id (see `dedupeEvidence`). */
  dedupes: boolean;
  /** Job / task / function name within the queue (BullMQ job name, graphile-worker task, Inngest function id). */
  job?: string;
  /** The message identity the handler reads, when visible (`job.id`, `message.key`, `event.id`). */
  messageId?: string;
  dedupeEvidence?: DedupeEvidence;
  /** Set when no evidence was found and a claim near the id was refused because its key is made fresh per attempt. */
  perAttemptClaim?: PerAttemptClaim;
  /** Registered through the project's own wrapper (`KafkaService.subscribe`), found at the wrapper's consumer. */
  via?: { name: string; file: string; line: number };
}

export interface CronFinding extends FindingBase {
  kind: 'cron';
  scheduler: string;
  schedule?: string;
  name?: string;
  /** Its callback, written in place, only logs or is empty: running a slot twice changes nothing. */
  inert?: true;
}

export interface ExistingIdempotencyFinding extends FindingBase {
  kind: 'existing-idempotency';
  mechanism: string;
  detail: string;
}

export type Finding =
  | EndpointFinding
  | PaymentFinding
  | WebhookFinding
  | ConsumerFinding
  | CronFinding
  | ExistingIdempotencyFinding;

export interface RouteAuthentication {
  file: string;
  line: number;
  method: HttpMethod;
  path: string;
  by: string[];
}

export interface Inspection {
  /** Absolute path inspected; only printed, never used to build other paths. */
  root: string;
  stack: StackFacts;
  findings: Finding[];
  warnings: string[];
  /**
   * A package.json was read (at the root or in a workspace), so an empty `stack.databases` means the project declares
   * no database client, rather than that its dependencies were never seen (no manifest, or no inspection at all).
   */
  manifestRead?: boolean;
  /**
   * Express, Koa, Fastify and Hono routes whose authentication the inspection could read (its own middleware and
   * hooks, its router's use() before it, the middleware where the router is mounted): `by` lists what authenticates
   * the route, empty when nothing does. A route the reader could not decide is not listed.
   */
  routeAuthentication?: RouteAuthentication[];
}

export interface InspectOptions {
  onProgress?: (done: number, total: number) => void;
}
