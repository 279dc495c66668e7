import type { PaymentRisk } from '../inspect/types.js';

/**
 * What the code of one configured action does, read by the findings engine (src/findings/actionFacts.ts) and kept in
 * the project snapshot so `generate` renders the same text without reading code. Plain data; the design model reads it
 * to write each action's text from the code rather than from its name.
 */
export interface ActionCodeFacts {
  /** The configured action's name. */
  action: string;
  handler: { file: string; line: number; name?: string };
  /** Provider calls the handler makes (directly or through helpers it calls), in the order they run. */
  calls: ProviderCallFact[];
  /** Tables or ORM models the handler writes. */
  writes: WriteFact[];
  /** Messages the handler sends to a person (e-mail, SMS, push), directly or through helpers, in the order they run. */
  messages?: MessageFact[];
  /** Events the handler publishes to a broker (Kafka, RabbitMQ, a BullMQ queue, SQS, NATS), in the order they run. */
  publishes?: PublishFact[];
  /** Time-out and attempts of each provider client the calls go through. */
  budgets: ProviderBudget[];
  /** The handler and the helpers it reaches, as line ranges: findings inside them belong to this action. */
  spans?: Array<{ file: string; from: number; to: number }>;
  /** A platform limit on the handler's run time (Next.js/Vercel `maxDuration`). */
  platformCap?: { ms: number; evidence: string };
  /**
   * The handler takes the claim's transaction (`idempotencyOf(req).db`): its writes can commit with the claim. Absent,
   * its writes go through the project's own connections, which the claim's transaction cannot roll back.
   */
  claimTransaction?: true;
  /** The handler is a NestJS GraphQL resolver method (`@Mutation()` from @nestjs/graphql), not a controller route. */
  graphql?: 'nestjs';
  /**
   * A check that refuses a repeat before any effect: `throw new Error('Team is already unsubscribed.')` after reading
   * the state the first run changed. A retry whose answer was lost gets this error instead of the first run's
   * success; two concurrent runs both pass it.
   */
  refusal?: { file: string; line: number; message: string };
}

export interface ProviderCallFact {
  provider: string;
  operation: string;
  risk: PaymentRisk;
  file: string;
  line: number;
  /** Passes the provider's idempotency key. */
  keyed: boolean;
  /** The key is made on each call (`randomUUID()`, `Date.now()`): a retried request sends the provider another. */
  keyPerAttempt?: boolean;
  /** The helper function the call sits in, when it is not the handler itself. */
  via?: string;
  /** An update, cancel or delete: repeating it leaves the same state. */
  repeatsSafely?: boolean;
}

export interface MessageFact {
  channel: 'email' | 'sms' | 'push';
  /** The sending library: nodemailer, sendgrid, resend, postmark, mailgun, ses, twilio, firebase, web-push. */
  library: string;
  /** The call as written after the client: `sendMail`, `emails.send`, `messages.create`. */
  operation: string;
  file: string;
  line: number;
  /** Passes the library's idempotency key (Resend's `{ idempotencyKey }`), so the provider drops a resent copy. */
  keyed: boolean;
  /** The key is made on each call (`randomUUID()`): a retried request sends another, and the copy goes out again. */
  keyPerAttempt?: boolean;
  /** The helper function the send sits in, when it is not the handler itself. */
  via?: string;
}

export interface PublishFact {
  /** kafka, rabbitmq, bullmq, bull, sqs or nats. */
  broker: string;
  /** The topic, queue or subject when the call names it with a string. */
  topic?: string;
  file: string;
  line: number;
  via?: string;
}

export interface WriteFact {
  target: string;
  kind: 'create' | 'upsert' | 'update' | 'delete';
  file: string;
  line: number;
  /** Set when the schema files declare a unique constraint on the target (any column set). */
  uniqueColumns?: string[];
  /**
   * An upsert whose conflict key is made fresh per attempt (`randomUUID()`): it never conflicts, so `kind` is
   * `create` and this names the value.
   */
  freshKey?: string;
  /**
   * Fields the write changes by an amount rather than to a value (`$inc`, Prisma's `increment`, knex/TypeORM
   * `increment`, `SET stock = stock + $1`): a repeat applies the change a second time. Empty when the fields cannot
   * be read.
   */
  relative?: string[];
  /** The database the write goes to, when it is not the one the store is in: 'MongoDB' for a Mongoose model. */
  database?: string;
}

export interface ProviderBudget {
  provider: string;
  /** Per-attempt time-out; null when the client has none (it may wait forever). */
  timeoutMs: number | null;
  attempts: number;
  /** Where the numbers come from: the constructor that sets them, or the SDK default. */
  evidence: string;
  /** The calls go over raw HTTP (fetch, axios, …), not the provider's SDK: the HTTP client sets the budget. */
  http?: true;
}
