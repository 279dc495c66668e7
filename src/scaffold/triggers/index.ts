import type { ActionDesign, DesignModel } from '../../model/types.js';
import { deliveringBroker, workerKinds } from '../../model/workerOutcomes.js';
import type { ModuleType } from '../javascript/transpile.js';
import { readTemplate } from '../readTemplate.js';
import type { ScaffoldRole } from '../types.js';
import { renderOrderingMigration } from './renderOrderingMigration.js';
import { renderReconcileJob } from './renderReconcileJob.js';
import { renderTriggersReadme } from './renderTriggersReadme.js';

export interface TriggerFile {
  readonly path: string;
  readonly contents: string;
  readonly role: ScaffoldRole;
  readonly purpose: string;
  /** A template kept in the house style, or rendered in it: prettier may skip it (see ScaffoldFile.formatted). */
  readonly formatted?: boolean;
  /** The file printed as JavaScript (see ScaffoldFile.javascript). */
  readonly javascript?: string;
}

/** Which parts of the trigger runtime a design needs: derived from its actions, their providers and the broker. */
export interface TriggerPlan {
  readonly webhooks: readonly ActionDesign[];
  readonly consumers: readonly ActionDesign[];
  readonly crons: readonly ActionDesign[];
  /**
   * Queue client adapters, one for each broker the consumers are delivered by (each action's own, else the stack's:
   * the brokers the document names), in the document's order. The generic handler is always there when consumers are.
   */
  readonly brokers: readonly BrokerAdapter[];
  /** Actions whose stuck records the reconciliation job can ask a provider about. */
  readonly reconciled: readonly ActionDesign[];
  readonly webFramework: 'express' | 'fastify' | 'nestjs' | 'next' | 'other';
  /** The HTTP platform under the framework when it runs on more than one (NestJS on Fastify). */
  readonly httpPlatform?: 'fastify';
  /** What the chosen store offers the trigger runtime beyond the IdempotencyStore interface every store implements. */
  readonly store: TriggerStoreSupport;
}

/**
 * The processors (webhooks, consumers, cron) depend only on IdempotencyCore over the IdempotencyStore interface, so
 * they ship for every store. What differs: `listStuck` (optional in the interface) is what the reconciliation job
 * needs; the out-of-order table and the shipped trigger suites are written in PostgreSQL.
 */
export interface TriggerStoreSupport {
  readonly id: string;
  readonly label: string;
  /** The store implements IdempotencyStore.listStuck: the reconciliation job can find stuck records. */
  readonly listStuck: boolean;
  /** webhooks/ordering.ts and migrations/002 (a PostgreSQL table) apply. */
  readonly orderingTable: boolean;
  /** The trigger suites (webhooks/consumers/cron/reconcile *.test.ts) run against this store. */
  readonly suites: boolean;
}

const STORE_SUPPORT: Record<string, Omit<TriggerStoreSupport, 'id'>> = {
  postgres: { label: 'PostgreSQL', listStuck: true, orderingTable: true, suites: true },
  mysql: { label: 'MySQL/MariaDB', listStuck: false, orderingTable: false, suites: false },
  sqlite: { label: 'SQLite', listStuck: false, orderingTable: false, suites: false },
  libsql: { label: 'libSQL (Turso)', listStuck: false, orderingTable: false, suites: false },
  redis: { label: 'Redis', listStuck: false, orderingTable: false, suites: false },
  dynamodb: { label: 'DynamoDB', listStuck: false, orderingTable: false, suites: false },
};

/** The trigger support of a store by its id (an unknown store gets the interface only: processors, no extras). */
export function triggerStoreSupport(storeId = 'postgres'): TriggerStoreSupport {
  return { id: storeId, ...(STORE_SUPPORT[storeId] ?? { label: storeId, listStuck: false, orderingTable: false, suites: false }) };
}

/** The client adapters in consumers/ (a template each). */
export type BrokerAdapter = 'bullmq' | 'bull' | 'amqplib' | 'nats' | 'kafka' | 'sqs';

const BROKER_ADAPTERS: Record<string, BrokerAdapter | undefined> = {
  bullmq: 'bullmq',
  bull: 'bull',
  rabbitmq: 'amqplib',
  nats: 'nats',
  kafka: 'kafka',
  sqs: 'sqs',
};

/** The adapter for a consumer's broker (its own, else the stack's); undefined where the scaffold has none (an unknown one). */
export function consumerAdapter(action: { broker?: string | undefined }, stackBroker: string): BrokerAdapter | undefined {
  return BROKER_ADAPTERS[deliveringBroker(action, stackBroker)];
}

/** The adapters the consumers' brokers have, once each, in the order the document lists the brokers (workerKinds). */
export function brokerAdapters(consumers: ReadonlyArray<{ broker?: string | undefined }>, stackBroker: string): BrokerAdapter[] {
  const brokers = workerKinds(consumers.map((action) => ({ ...action, trigger: 'consumer' })), stackBroker).brokers;
  return [...new Set(brokers.flatMap((broker) => BROKER_ADAPTERS[broker] ?? []))];
}

const RECONCILABLE = new Set(['stripe', 'adyen', 'paypal']);

export function planTriggers(model: DesignModel, frameworkModule = 'express', storeId = storeIdOf(model), httpPlatform?: 'fastify'): TriggerPlan {
  const store = triggerStoreSupport(storeId);
  const by = (trigger: ActionDesign['trigger']) => model.actions.filter((action) => action.trigger === trigger);
  const consumers = by('consumer');
  return {
    webhooks: by('webhook'),
    consumers,
    crons: by('cron'),
    brokers: brokerAdapters(consumers, model.stack.broker),
    // The job lists stuck records through IdempotencyStore.listStuck; a store without it gets no job (TRIGGERS.md says so).
    reconciled: !store.listStuck ? [] : model.actions.filter(
      // Actions that create something at the provider; a webhook only receives its events, so there is nothing to look up.
      (action) =>
        action.trigger !== 'webhook' &&
        action.mode === 'lease' &&
        action.provider !== undefined &&
        RECONCILABLE.has(action.provider) &&
        action.steps.length <= 1,
    ),
    webFramework: frameworkModule === 'express' || frameworkModule === 'fastify' || frameworkModule === 'nestjs' || frameworkModule === 'next' ? frameworkModule : 'other',
    ...(httpPlatform ? { httpPlatform } : {}),
    store,
  };
}

/** The store the scaffold targets for this design (the registry's choice): mysql serves MariaDB too. */
function storeIdOf(model: DesignModel): string {
  const database = model.stack.storeDatabase;
  return database === 'mariadb' ? 'mysql' : database;
}

/**
 * The trigger runtime beyond HTTP, for the triggers and providers the design has: webhooks keyed by the provider's
 * event id (signature first), queue consumers keyed by message id, scheduled jobs keyed by slot, and the
 * reconciliation job for stuck provider calls. Static templates over the same core and store; only the
 * reconciliation job, the ordering migration and the README section are rendered.
 */
export function triggerFiles(model: DesignModel, frameworkModule = 'express', storeId?: string, httpPlatform?: 'fastify', javascript?: ModuleType): TriggerFile[] {
  const plan = planTriggers(model, frameworkModule, storeId, httpPlatform);
  const suites = plan.store.suites;
  const files: TriggerFile[] = [];
  const copy = (path: string, role: ScaffoldRole, purpose: string) =>
    files.push({ path, contents: readTemplate(`typescript/${path}`), role, purpose, formatted: true });

  if (plan.webhooks.length > 0) {
    copy('webhooks/verify.ts', 'middleware', 'webhook signature checks on the raw body (Stripe, Adyen, PayPal, GitHub, generic HMAC) and event identities');
    copy('webhooks/webhooks.ts', 'middleware', 'one execution per provider event: signature first, then claim / lease / fence keyed by the event id');
    if (plan.store.orderingTable) copy('webhooks/ordering.ts', 'store', 'per-object "last applied" version, so an older event never overwrites a newer one');
    copy('webhooks/metrics.ts', 'metrics', 'prom-client counter of webhook events by outcome (applied, duplicate, ignored, failed, ...)');
    if (plan.webFramework !== 'other') copy(`webhooks/${plan.webFramework}.ts`, 'middleware', `${{ express: 'Express', fastify: 'Fastify', nestjs: 'NestJS', next: 'Next.js App Router' }[plan.webFramework]} route for a webhook: raw body, then the processor`);
    if (suites) copy('webhooks/webhooks.test.ts', 'tests', 'webhook scenarios: bad signature, concurrent duplicate deliveries, ignored types, out-of-order events');
    if (plan.store.orderingTable) files.push({ path: 'migrations/002_webhook_object_versions.sql', contents: renderOrderingMigration(model), role: 'ddl', purpose: 'the webhook ordering table (apply after 001)' });
  }
  if (plan.consumers.length > 0) {
    copy('consumers/handler.ts', 'other', 'idempotentHandler(): one execution per message id for any queue client');
    copy('consumers/metrics.ts', 'metrics', 'prom-client counters for consumer outcomes, redeliveries and dead-lettered messages');
    const purposes = {
      bullmq: 'BullMQ: deterministic jobId for producers, worker processor that dedupes in the store',
      bull: 'Bull (legacy, bull / @nestjs/bull): deterministic jobId for producers, process() handler that dedupes in the store',
      amqplib: 'RabbitMQ (amqplib): ack after completion, counted retries, poison messages to the dead-letter exchange',
      nats: 'NATS JetStream: Nats-Msg-Id on publish, consumer-side dedupe beyond the duplicate window',
      kafka: 'kafkajs: business key or topic/partition/offset, offsets committed after completion',
      sqs: 'Amazon SQS (@aws-sdk/client-sqs): delete after completion, visibility for busy messages, poison messages to the dead-letter queue',
    } as const;
    for (const broker of plan.brokers) copy(`consumers/${broker}.ts`, 'other', purposes[broker]);
    if (suites) copy('consumers/consumers.test.ts', 'tests', 'consumer scenarios: redelivery, duplicate publish, concurrent delivery, poison message');
  }
  if (plan.crons.length > 0) {
    copy('cron/guard.ts', 'other', 'scheduled jobs: one run per (job, slot) across instances; node-cron, node-schedule, cron, NestJS, Vercel');
    copy('cron/metrics.ts', 'metrics', 'prom-client metrics for slots run, skipped, missed and crashed');
    if (suites) copy('cron/cron.test.ts', 'tests', 'scheduled-job scenarios: two schedulers fire one slot, a crashed slot is reported');
  }
  if (plan.reconciled.length > 0) {
    copy('reconcile/reconcile.ts', 'other', 'finds records stuck past their lease, asks the provider, completes or releases them');
    copy('reconcile/metrics.ts', 'metrics', 'prom-client counter for reconciliation outcomes');
    const providers = [...new Set(plan.reconciled.map((action) => action.provider!))].sort();
    for (const provider of providers) copy(`reconcile/${provider}.ts`, 'providers', `${provider} lookup by the derived key (read-only: it never charges)`);
    const job = { path: 'reconcile/job.ts', contents: renderReconcileJob(plan), role: 'cleanup', purpose: 'runnable reconciliation job for cron, with --dry-run', formatted: true } as const;
    files.push(javascript ? { ...job, javascript: renderReconcileJob(plan, javascript) } : job);
    copy('reconcile/reconcile.test.ts', 'tests', 'reconciliation against a local fake provider: stuck records resolved, nothing charged twice');
  }
  if (files.length > 0) {
    // NestJS examples use decorators, which the old path transpiles; it stays for them.
    const direct = javascript && plan.webFramework !== 'nestjs' ? { javascript: renderTriggersReadme(model, plan, javascript) } : {};
    files.push({ path: 'TRIGGERS.md', contents: renderTriggersReadme(model, plan), role: 'readme', purpose: 'wiring for webhooks, consumers, scheduled jobs and reconciliation', formatted: true, ...direct });
  }
  return files;
}
