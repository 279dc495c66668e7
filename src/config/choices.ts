/**
 * The allowed values of the config's enumerations, without zod: the CLI's option help lists them, and loading the
 * schema (zod) for `--help` would cost more than the rest of start-up. schema.ts builds its validators from these.
 */
export const CONFIG_FILE = 'idempotency.config.json';

export const TRIGGERS = ['http', 'webhook', 'consumer', 'cron'] as const;
export const PROVIDERS = ['stripe', 'adyen', 'paypal', 'bank-transfer'] as const;
export const LANGUAGES = ['typescript', 'javascript', 'unknown'] as const;
export const FRAMEWORKS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none', 'unknown'] as const;
export const DATABASES = ['postgres', 'mysql', 'mariadb', 'sqlite', 'libsql', 'mongodb', 'dynamodb', 'redis', 'unknown'] as const;
export const BROKERS = ['none', 'bullmq', 'bull', 'kafka', 'rabbitmq', 'sqs', 'nats', 'unknown'] as const;
export const TEST_FRAMEWORKS = ['vitest', 'jest', 'node-test', 'mocha', 'unknown'] as const;
export const RETRY_SOURCES = [
  'client-retry',
  'double-click',
  'load-balancer-replay',
  'queue-redelivery',
  'webhook-resend',
  'cron-overlap',
  'network-partition',
] as const;
export const CONCURRENCY = ['single-server', 'multi-instance', 'global'] as const;
export const SCOPES = ['user', 'account', 'tenant', 'global'] as const;
export const KEY_SOURCES = ['client', 'server', 'derived'] as const;
/** How an HTTP action is reached when it is not a route of its own: absent for a plain HTTP route. */
export const TRANSPORTS = ['graphql', 'trpc', 'server-action'] as const;
export const FORMATS = ['html', 'md'] as const;
export const SPLITS = ['auto', 'always', 'never'] as const;
