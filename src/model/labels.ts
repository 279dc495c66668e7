import type { Database, Framework, Provider, RetrySource, Scope, Transport, Trigger } from '../config/schema.js';
import { LIMITS } from '../config/limits.js';
import { parseHttpRoute } from './naming.js';

/** "a", "a and b", "a, b and c": names in a sentence. */
export function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]!}`;
}

/** A Next.js Pages Router API route file (`pages/api/…`, `src/pages/api/…`), by its project-relative path. */
export function isPagesApiFile(file: string | undefined): boolean {
  return file !== undefined && /(^|\/)pages\/api\//.test(file);
}

/** Names in a sentence with a bounded length: `a, b, c and 4 more` past four (config texts have a length limit). */
export function fewNames(items: readonly string[], shown = 3): string {
  return items.length <= shown + 1 ? andList(items) : `${items.slice(0, shown).join(', ')} and ${items.length - shown} more`;
}

/**
 * A sentence naming actions that fits one config text (LIMITS.textLength): as many names as fit, down to one and a
 * count of the rest, else only the count.
 */
export function sentenceNaming(items: readonly string[], render: (names: string) => string): string {
  for (const shown of [3, 2, 1]) {
    const text = render(fewNames(items, shown));
    if (text.length <= LIMITS.textLength) return text;
  }
  return render(`${items.length} actions`);
}

export const FRAMEWORK_LABELS: Record<Framework, string> = {
  express: 'Express',
  fastify: 'Fastify',
  nestjs: 'NestJS',
  koa: 'Koa',
  hono: 'Hono',
  nextjs: 'Next.js route handlers',
  none: 'no HTTP framework',
  unknown: 'an unspecified framework',
};

export const DATABASE_LABELS: Record<Database, string> = {
  postgres: 'PostgreSQL',
  mysql: 'MySQL',
  mariadb: 'MariaDB',
  sqlite: 'SQLite',
  libsql: 'libSQL (Turso)',
  mongodb: 'MongoDB',
  dynamodb: 'DynamoDB',
  redis: 'Redis',
  unknown: 'PostgreSQL (reference)',
};

export const BROKER_LABELS: Record<string, string> = {
  none: 'no message broker',
  bullmq: 'BullMQ',
  bull: 'Bull',
  kafka: 'Kafka',
  rabbitmq: 'RabbitMQ',
  sqs: 'Amazon SQS',
  nats: 'NATS',
  unknown: 'an unspecified broker',
};

/** A broker as the place a message goes: "publishes `x` to a BullMQ queue", "to Kafka". */
export function brokerDestination(broker: string): string {
  if (broker === 'bullmq' || broker === 'bull') return `a ${BROKER_LABELS[broker]} queue`;
  return BROKER_LABELS[broker] ?? broker;
}

export const TEST_FRAMEWORK_LABELS: Record<string, string> = {
  vitest: 'Vitest',
  jest: 'Jest',
  'node-test': 'node:test',
  mocha: 'Mocha',
  unknown: 'Vitest',
};

export const TRIGGER_LABELS: Record<Trigger, string> = {
  http: 'HTTP endpoint',
  webhook: 'Inbound webhook',
  consumer: 'Queue consumer',
  cron: 'Scheduled job',
};

export const PROVIDER_LABELS: Record<Provider, string> = {
  stripe: 'Stripe',
  adyen: 'Adyen',
  paypal: 'PayPal',
  'bank-transfer': 'Bank transfer',
};

/** What an HTTP action without a route of its own is. */
export const TRANSPORT_LABELS: Record<Transport, string> = {
  graphql: 'GraphQL mutation',
  trpc: 'tRPC procedure',
  'server-action': 'Server Action',
};

/** How each is reached: no request goes to the path its configured route names. */
const TRANSPORT_REACHED: Record<Transport, string> = {
  graphql: "sent to the project's GraphQL endpoint with every other operation",
  trpc: "called through the project's tRPC router",
  'server-action': 'called by Next.js from the client',
};

/**
 * The mutation, procedure or action name: the configured route's path without its slash (`POST /billing.refund`
 * is the procedure billing.refund), else the action's name.
 */
export function transportName(action: { name: string; route?: string }): string {
  const path = parseHttpRoute(action.route)?.path.replace(/^\/+/, '');
  return path ? path : action.name;
}

/** "GraphQL mutation payOrder, sent to the project's GraphQL endpoint with every other operation" (plain text). */
export function describeTransport(transport: Transport, action: { name: string; route?: string }): string {
  return `${TRANSPORT_LABELS[transport]} ${transportName(action)}, ${TRANSPORT_REACHED[transport]}`;
}

/** The two halves around the name, for renderers that set the name as code. */
export function transportParts(transport: Transport): { before: string; after: string } {
  return { before: `${TRANSPORT_LABELS[transport]} `, after: `, ${TRANSPORT_REACHED[transport]}` };
}

export const SCOPE_LABELS: Record<Scope, string> = {
  user: 'per user',
  account: 'per account',
  tenant: 'per tenant',
  global: 'global',
};

/** Short prefix used in example keys, e.g. "usr_7fQ9x". */
export const SCOPE_EXAMPLES: Record<Scope, string> = {
  user: 'usr_7fQ9x',
  account: 'acct_4Kd2P',
  tenant: 'tnt_acme',
  global: 'global',
};

export const RETRY_SOURCE_TEXT: Record<RetrySource, { label: string; how: string }> = {
  'client-retry': {
    label: 'Client retry',
    how: 'the caller times out waiting for the response and sends the same request again',
  },
  'double-click': {
    label: 'Double submit',
    how: 'a user presses submit twice, or a page reload re-posts the form',
  },
  'load-balancer-replay': {
    label: 'Load-balancer replay',
    how: 'a proxy retries the request on another instance after an upstream reset or timeout',
  },
  'queue-redelivery': {
    label: 'Queue redelivery',
    how: 'the broker redelivers a message whose acknowledgement was lost or came after the visibility timeout',
  },
  'webhook-resend': {
    label: 'Webhook resend',
    how: 'the provider resends an event it believes was not acknowledged with a 2xx in time',
  },
  'cron-overlap': {
    label: 'Cron overlap',
    how: 'the next scheduled run starts while the previous one is still working, or two instances fire the same schedule',
  },
  'network-partition': {
    label: 'Network partition',
    how: 'a partition makes the caller give up on one instance and reach another with the same request',
  },
};

/** Which retry sources can reach an action, given how it is triggered. */
export const RETRY_SOURCES_BY_TRIGGER: Record<Trigger, RetrySource[]> = {
  http: ['client-retry', 'double-click', 'load-balancer-replay', 'network-partition'],
  webhook: ['webhook-resend', 'load-balancer-replay', 'network-partition'],
  consumer: ['queue-redelivery', 'network-partition'],
  cron: ['cron-overlap'],
};

/**
 * An HTTP route keyed by fields of its body in one key space for all callers (`"key": { "source": "derived" }`,
 * `"scope": "global"`): another system calls it, a payment gateway's notification for instance. Its sender resends
 * and retries; no person double-clicks it.
 */
export function sentByAnotherSystem(action: { trigger: Trigger; scope?: string; key?: { source: string } }): boolean {
  return action.trigger === 'http' && action.scope === 'global' && action.key?.source === 'derived';
}

/** Which retry sources can reach an action: those of its trigger, and a sender's resends for a notification route. */
export function retrySourcesOf(action: { trigger: Trigger; scope?: string; key?: { source: string } }): RetrySource[] {
  if (sentByAnotherSystem(action)) return ['webhook-resend', 'client-retry', 'load-balancer-replay', 'network-partition'];
  return RETRY_SOURCES_BY_TRIGGER[action.trigger];
}
