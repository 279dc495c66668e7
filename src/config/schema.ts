import { z } from 'zod';
import { TRIGGERS, PROVIDERS, LANGUAGES, FRAMEWORKS, DATABASES, BROKERS, TEST_FRAMEWORKS, RETRY_SOURCES, CONCURRENCY, SCOPES, KEY_SOURCES, TRANSPORTS, FORMATS, SPLITS } from './choices.js';
import { DURATION_HELP, parseDuration } from './duration.js';
import { DURATION_LIMITS, LIMITS } from './limits.js';
import { fieldText, nameText, projectPath, safeText } from './text.js';

/**
 * The one source of truth for idempotency.config.json: the loader validates with it, the
 * TypeScript types are inferred from it, and scripts/write-schema.mjs turns it into the shipped JSON Schema.
 */

export { TRIGGERS, PROVIDERS, LANGUAGES, FRAMEWORKS, DATABASES, BROKERS, TEST_FRAMEWORKS, RETRY_SOURCES, CONCURRENCY, SCOPES, KEY_SOURCES, TRANSPORTS, FORMATS, SPLITS };

const duration = (example: string, bounds: { min: number; max: number; text: string }) =>
  z
    .string()
    .max(40)
    .refine((text) => parseDuration(text) !== undefined, { message: `expected ${DURATION_HELP}` })
    // Checked on the parsed value: "1e300"-sized numbers must never reach the model as Infinity.
    .refine(
      (text) => {
        const ms = parseDuration(text);
        return ms === undefined || (Number.isFinite(ms) && ms >= bounds.min && ms <= bounds.max);
      },
      { message: `expected a duration ${bounds.text}` },
    )
    .meta({ description: `Duration: ${DURATION_HELP}, ${bounds.text}.`, examples: [example] });

// Names reach prose, tables, anchors and code: printable text with at least one letter is allowed and each
// renderer escapes it for where it lands; scaffolding derives safe identifiers from it.
const identifier = nameText;
const fieldName = fieldText;

export const stepSchema = z.strictObject({
  name: identifier.meta({ description: 'Step name, e.g. "reserveInventory".' }),
  compensation: identifier.optional().meta({ description: 'The step that undoes this one, e.g. "releaseInventory".' }),
  provider: z.enum(PROVIDERS).optional().meta({ description: 'Payment provider this step calls, if any.' }),
});

export const actionSchema = z.strictObject({
  name: identifier.meta({ description: 'Action name as the code calls it, e.g. "createPayment".' }),
  trigger: z.enum(TRIGGERS),
  route: safeText()
    .min(1)
    .optional()
    .meta({ description: 'HTTP "METHOD /path", queue or topic name, or cron expression.' }),
  transport: z
    .enum(TRANSPORTS)
    .optional()
    .meta({
      description:
        'How an HTTP action is reached when it is not a route of its own: "graphql" (a mutation sent to the GraphQL endpoint), "trpc" (a tRPC procedure), "server-action" (a Next.js Server Action). Absent for a plain HTTP route. The route then names the mutation, procedure or action ("POST /payOrder"): a label the fingerprint hashes, not a URL.',
    }),
  significantFields: z
    .array(fieldName)
    .min(1)
    .max(LIMITS.significantFields)
    .meta({ description: 'Request fields that, when changed, mean a different intent (hashed into the fingerprint).' }),
  provider: z.enum(PROVIDERS).optional(),
  steps: z.array(stepSchema).max(LIMITS.stepsPerSaga).optional().meta({ description: 'Saga steps, in execution order.' }),
  expectedDurationMs: z.number().int().positive().max(86_400_000).optional(),
  source: safeText().optional().meta({ description: 'Where the handler lives, e.g. "src/routes/payments.ts:42".' }),
  description: safeText().optional().meta({ description: 'What executes: the mutation or external call.' }),
  duplicateImpact: safeText().optional().meta({ description: 'What goes wrong when it runs twice.' }),
  scope: z.enum(SCOPES).optional().meta({ description: 'Who owns the key; defaults from the trigger.' }),
  key: z
    .strictObject({
      source: z.enum(KEY_SOURCES),
      from: z.array(fieldName).min(1).max(LIMITS.keyFields).optional().meta({ description: 'Fields a derived key is computed from.' }),
      bits: z.number().int().min(8).max(512).optional().meta({ description: 'Entropy of the variable part of the key.' }),
      field: z
        .string()
        // It is written into the user's templates as an input's name: a plain name, nothing to escape.
        .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'expected a form field name of letters, digits, "_" and "-", starting with a letter or "_", e.g. "idempotencyKey"')
        .optional()
        .meta({
          description:
            'For an HTTP action a server-rendered form posts: the hidden form field its key arrives in when the request has no key header (a browser form cannot set one), e.g. "idempotencyKey". The server mints one per render (newIdempotencyKey()). Only with a "client" or "server" key source.',
        }),
    })
    .optional(),
  volumePerDay: z.number().int().positive().max(LIMITS.volumePerDay).optional().meta({ description: 'Expected executions per day.' }),
  mode: z
    .enum(['transactional', 'lease'])
    .optional()
    .meta({
      description:
        'How the generated runtime holds the key. "transactional": the action writes only to the store\'s database, and the claim, those writes and the completion commit in one transaction. "lease": the action has effects elsewhere (payments, e-mail, other services). Default: lease when the action or one of its steps calls a provider or the action has saga steps, transactional otherwise.',
    }),
  rollout: z
    .enum(['enforce', 'log-only'])
    .optional()
    .meta({
      description:
        'How the generated runtime treats this action while it is rolled out. "enforce" (default): duplicates are replayed or refused. "log-only": every request runs its handler; a first sighting of a key is still claimed and recorded (lease mode, store failures ignored), and what would have been replayed or refused is only counted in the idempotency_log_only_total metric. Switch to "enforce" once the counts look right; set "log-only" again to roll back.',
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
    dir: projectPath('src/idempotency').meta({ description: 'Folder, relative to the project root, for the generated code.' }),
  }),
]);

export const configSchema = z
  .strictObject({
    $schema: safeText().optional(),
    title: safeText(200).min(1).optional().meta({ description: 'Document title; defaults from package.json.' }),
    format: z.enum(FORMATS).default('html'),
    output: projectPath('docs/idempotency-design.html')
      // A regex rather than a refinement, so the shipped JSON Schema carries it and editors flag it too.
      .regex(/\.(html|md)$/, 'expected a path ending in .html or .md, e.g. "docs/idempotency-design.html"; "format" then decides which')
      .optional()
      .meta({ description: 'Document path ending in .html or .md (the format decides which); defaults to docs/idempotency-design.html or .md.' }),
    split: z.enum(SPLITS).default('auto'),
    actions: z.array(actionSchema).min(1, 'expected at least one action to protect').max(LIMITS.actions),
    stack: stackSchema,
    retrySources: z.array(z.enum(RETRY_SOURCES)).max(RETRY_SOURCES.length * 2).default([]),
    payments: z.array(z.enum(PROVIDERS)).max(PROVIDERS.length * 2).default([]),
    concurrency: z.enum(CONCURRENCY),
    retention: duration('72h', DURATION_LIMITS.retention),
    detectionLatency: duration('50ms', DURATION_LIMITS.detectionLatency),
    scaffold: scaffoldSchema.default(false),
    conflictStatus: z
      .union([z.literal(422), z.literal(409)])
      .default(422)
      .meta({ description: 'Status for a reused key with a different request: 422 (IETF draft) or 409.' }),
    inFlight: z
      .enum(['reject', 'wait'])
      .default('reject')
      .meta({ description: 'A duplicate of a request still running gets 409 at once, or waits briefly for the result.' }),
    expectedVolumePerDay: z.number().int().positive().max(LIMITS.volumePerDay).optional(),
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
    assumptions: z.array(safeText().min(1)).max(LIMITS.assumptions).default([]),
  })
  .superRefine((config, ctx) => {
    const totalSteps = config.actions.reduce((sum, action) => sum + (action.steps?.length ?? 0), 0);
    if (totalSteps > LIMITS.totalSteps) {
      ctx.addIssue({ code: 'custom', path: ['actions'], message: `expected at most ${LIMITS.totalSteps} saga steps over all actions, found ${totalSteps}; keep the largest sagas, or split the design per service` });
    }
    const names = new Set<string>();
    config.actions.forEach((action, index) => {
      if (names.has(action.name)) {
        ctx.addIssue({ code: 'custom', path: ['actions', index, 'name'], message: `expected a unique action name; "${action.name}" appears twice` });
      }
      names.add(action.name);
      if (action.transport && action.trigger !== 'http') {
        ctx.addIssue({ code: 'custom', path: ['actions', index, 'transport'], message: `expected no transport for a ${action.trigger} action: "${action.transport}" describes how an HTTP action is reached; remove it or set "trigger": "http"` });
      }
      if (action.key?.field !== undefined && (action.key.source === 'derived' || action.trigger !== 'http')) {
        ctx.addIssue({ code: 'custom', path: ['actions', index, 'key', 'field'], message: 'expected a key field only on an HTTP action whose key the caller sends ("client" or "server" source): a derived key is computed, not posted; remove "field"' });
      }
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
export type Transport = (typeof TRANSPORTS)[number];
