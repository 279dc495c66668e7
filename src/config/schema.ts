import { z } from 'zod';
import { DURATION_HELP, parseDuration } from './duration.js';

/**
 * The one source of truth for idempotency.config.json: the loader validates with it, the
 * TypeScript types are inferred from it, and scripts/write-schema.mjs turns it into the shipped JSON Schema.
 */

export const TRIGGERS = ['http', 'webhook', 'consumer', 'cron'] as const;
export const PROVIDERS = ['stripe', 'adyen', 'paypal', 'bank-transfer'] as const;
export const LANGUAGES = ['typescript', 'javascript', 'unknown'] as const;
export const FRAMEWORKS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none', 'unknown'] as const;
export const DATABASES = ['postgres', 'mysql', 'mariadb', 'sqlite', 'mongodb', 'dynamodb', 'redis', 'unknown'] as const;
export const BROKERS = ['none', 'bullmq', 'kafka', 'rabbitmq', 'sqs', 'nats', 'unknown'] as const;
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
export const FORMATS = ['html', 'md'] as const;
export const SPLITS = ['auto', 'always', 'never'] as const;

const duration = (example: string) =>
  z
    .string()
    .refine((text) => parseDuration(text) !== undefined, { message: `expected ${DURATION_HELP}` })
    .meta({ description: `Duration: ${DURATION_HELP}.`, examples: [example] });

// Names reach prose, tables and code: any printable text is allowed here and each renderer escapes
// it for where it lands; scaffolding derives safe identifiers from it.
const identifier = z
  .string()
  .min(1)
  .max(100)
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'expected a name without control characters');

const fieldName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s]+$/, 'expected a field path without spaces, e.g. "amount" or "items[].sku"');

export const stepSchema = z.strictObject({
  name: identifier.meta({ description: 'Step name, e.g. "reserveInventory".' }),
  compensation: identifier.optional().meta({ description: 'The step that undoes this one, e.g. "releaseInventory".' }),
  provider: z.enum(PROVIDERS).optional().meta({ description: 'Payment provider this step calls, if any.' }),
});

export const actionSchema = z.strictObject({
  name: identifier.meta({ description: 'Action name as the code calls it, e.g. "createPayment".' }),
  trigger: z.enum(TRIGGERS),
  route: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .meta({ description: 'HTTP "METHOD /path", queue or topic name, or cron expression.' }),
  significantFields: z
    .array(fieldName)
    .min(1)
    .meta({ description: 'Request fields that, when changed, mean a different intent (hashed into the fingerprint).' }),
  provider: z.enum(PROVIDERS).optional(),
  steps: z.array(stepSchema).optional().meta({ description: 'Saga steps, in execution order.' }),
  expectedDurationMs: z.number().int().positive().max(86_400_000).optional(),
  source: z.string().max(500).optional().meta({ description: 'Where the handler lives, e.g. "src/routes/payments.ts:42".' }),
  description: z.string().max(500).optional().meta({ description: 'What executes: the mutation or external call.' }),
  duplicateImpact: z.string().max(500).optional().meta({ description: 'What goes wrong when it runs twice.' }),
  scope: z.enum(SCOPES).optional().meta({ description: 'Who owns the key; defaults from the trigger.' }),
  key: z
    .strictObject({
      source: z.enum(KEY_SOURCES),
      from: z.array(fieldName).min(1).optional().meta({ description: 'Fields a derived key is computed from.' }),
      bits: z.number().int().min(8).max(512).optional().meta({ description: 'Entropy of the variable part of the key.' }),
    })
    .optional(),
  volumePerDay: z.number().int().positive().optional().meta({ description: 'Expected executions per day.' }),
  mode: z
    .enum(['transactional', 'lease'])
    .optional()
    .meta({
      description:
        'How the generated runtime holds the key. "transactional": the action writes only to the store\'s database, and the claim, those writes and the completion commit in one transaction. "lease": the action has effects elsewhere (payments, e-mail, other services). Default: lease when the action or one of its steps calls a provider or the action has saga steps, transactional otherwise.',
    }),
});

export const stackSchema = z.strictObject({
  language: z.enum(LANGUAGES),
  framework: z.enum(FRAMEWORKS),
  database: z.enum(DATABASES),
  broker: z.enum(BROKERS).default('none'),
  testFramework: z.enum(TEST_FRAMEWORKS).default('vitest'),
});

export const scaffoldSchema = z.union([
  z.literal(false),
  z.strictObject({
    dir: z.string().min(1).meta({ description: 'Folder, relative to the project root, for the generated code.' }),
  }),
]);

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    title: z.string().min(1).max(200).optional().meta({ description: 'Document title; defaults from package.json.' }),
    format: z.enum(FORMATS).default('html'),
    output: z.string().min(1).optional().meta({ description: 'Document path; defaults to docs/idempotency-design.html or .md.' }),
    split: z.enum(SPLITS).default('auto'),
    actions: z.array(actionSchema).min(1, 'expected at least one action to protect'),
    stack: stackSchema,
    retrySources: z.array(z.enum(RETRY_SOURCES)).default([]),
    payments: z.array(z.enum(PROVIDERS)).default([]),
    concurrency: z.enum(CONCURRENCY),
    retention: duration('72h'),
    detectionLatency: duration('50ms'),
    scaffold: scaffoldSchema.default(false),
    conflictStatus: z
      .union([z.literal(422), z.literal(409)])
      .default(422)
      .meta({ description: 'Status for a reused key with a different request: 422 (IETF draft) or 409.' }),
    inFlight: z
      .enum(['reject', 'wait'])
      .default('reject')
      .meta({ description: 'A duplicate of a request still running gets 409 at once, or waits briefly for the result.' }),
    expectedVolumePerDay: z.number().int().positive().optional(),
    maxStoredResponseBytes: z
      .number()
      .int()
      .min(1_024)
      .max(104_857_600)
      .default(1_048_576)
      .meta({
        description:
          'Largest response body kept for replay, in bytes (default 1 MiB). A larger response is still sent once; its record keeps the status and a SHA-256 of the body, and a retry with the same key gets a response-not-replayable problem, never a second execution.',
      }),
    assumptions: z.array(z.string().min(1).max(500)).default([]),
  })
  .superRefine((config, ctx) => {
    const names = new Set<string>();
    config.actions.forEach((action, index) => {
      if (names.has(action.name)) {
        ctx.addIssue({ code: 'custom', path: ['actions', index, 'name'], message: `expected a unique action name; "${action.name}" appears twice` });
      }
      names.add(action.name);
      if (action.key?.source === 'derived' && !action.key.from) {
        ctx.addIssue({ code: 'custom', path: ['actions', index, 'key', 'from'], message: 'expected the fields a derived key is computed from' });
      }
      const stepNames = new Set<string>();
      action.steps?.forEach((step, stepIndex) => {
        if (stepNames.has(step.name)) {
          ctx.addIssue({ code: 'custom', path: ['actions', index, 'steps', stepIndex, 'name'], message: `expected unique step names; "${step.name}" appears twice` });
        }
        stepNames.add(step.name);
      });
    });
  });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type ActionConfig = z.output<typeof actionSchema>;
export type StackConfig = z.output<typeof stackSchema>;
export type Provider = (typeof PROVIDERS)[number];
export type Trigger = (typeof TRIGGERS)[number];
export type RetrySource = (typeof RETRY_SOURCES)[number];
export type Framework = (typeof FRAMEWORKS)[number];
export type Database = (typeof DATABASES)[number];
export type Scope = (typeof SCOPES)[number];
export type KeySource = (typeof KEY_SOURCES)[number];
