import type { FormLocation } from './actionForms.js';
import type { ActionConfig, Config, RetrySource, Scope } from '../config/schema.js';
import { describeDuration } from '../config/duration.js';
import { PROVIDER_LABELS, RETRY_SOURCE_TEXT, retrySourcesOf, SCOPE_EXAMPLES, SCOPE_LABELS, TRANSPORT_LABELS, TRIGGER_LABELS, transportName } from './labels.js';
import { parseHttpRoute, toCodeName } from './naming.js';
import { decideLease, expectedDuration } from './timing.js';
import { STORE_FACTS } from './storeFacts.js';
import { assessUniqueness } from './uniqueness.js';
import { deriveProviderKeyExample } from './providers.js';
import type { ActionCodeFacts } from './codeFacts.js';
import { codeDesign, describeFromCode, impactFromCode } from './fromCode.js';
import { worstCaseOf } from './timing.js';
import type { ActionDesign, ActionKeyDesign, FieldExclusion, StepDesign } from './types.js';

export interface ActionContext {
  config: Config;
  slug: string;
  databaseLabel: string;
  retentionMs: number;
  volumePerDay: number;
  volumeAssumed: boolean;
  existing: string[];
  /** What the findings engine read from the action's code, when it did. */
  facts?: ActionCodeFacts;
  /** The broker inspection found delivering this consumer, when it differs from or refines the stack's. */
  broker?: string;
  /** Server-rendered forms that post to this HTTP action (view templates, file:line). */
  forms?: readonly FormLocation[];
}

const SAMPLE_UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const SAMPLE_HASH = '9c56cc51b374c3ba189210d5b6d4bf57';

const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

function describeExecution(action: ActionConfig, databaseLabel: string): string {
  if (action.description) return action.description;
  const provider = action.provider ? PROVIDER_LABELS[action.provider] : undefined;
  const what = words(action.name);
  switch (action.trigger) {
    case 'http':
      return `${action.transport ? `The ${TRANSPORT_LABELS[action.transport]} ${transportName(action)}` : (action.route ?? 'The endpoint')} runs "${what}"${provider ? `, calls ${provider}` : ''} and writes the result to ${databaseLabel}.`;
    case 'webhook':
      return `Applies the event received on ${action.route ?? 'the webhook endpoint'} ("${what}")${provider ? ` from ${provider}` : ''} to local state in ${databaseLabel}.`;
    case 'consumer':
      return `Handles each message from ${action.route ?? 'its queue'} ("${what}")${provider ? `, calling ${provider}` : ''} and records the outcome in ${databaseLabel}.`;
    case 'cron':
      return `Runs "${what}" on the schedule ${action.route ?? 'configured for it'}${provider ? `, calling ${provider}` : ''}, writing to ${databaseLabel}.`;
  }
}

function describeImpact(action: ActionConfig): { text: string; severity: ActionDesign['severity'] } {
  if (action.duplicateImpact) {
    return { text: action.duplicateImpact, severity: action.provider ? 'financial' : 'data' };
  }
  const name = action.name.toLowerCase();
  const provider = action.provider ? PROVIDER_LABELS[action.provider] : undefined;
  if (provider && /refund/.test(name)) {
    return { text: `The customer is refunded twice through ${provider}: direct financial loss that needs manual recovery.`, severity: 'financial' };
  }
  if (provider && action.trigger === 'webhook') {
    return {
      text: `The same ${provider} event is applied twice: an order can be fulfilled or credited twice, and ledger entries double.`,
      severity: 'financial',
    };
  }
  if (provider) {
    return {
      text: `The customer is charged twice through ${provider}: financial loss, a refund to process, support load and chargeback risk, plus two local records for one intent.`,
      severity: 'financial',
    };
  }
  if (/mail|email|notif|sms|push|message|send/.test(name)) {
    return { text: 'The recipient gets the same message twice: user confusion and lost trust; for transactional messages, contradicting instructions.', severity: 'notification' };
  }
  if (action.trigger === 'cron') {
    return { text: 'The whole batch runs twice: every item it touches gets its side effect twice (for billing, duplicate invoices).', severity: 'data' };
  }
  if (/webhook|callback|event/.test(name) || action.trigger === 'webhook') {
    return { text: 'The event is applied twice: counters, balances or state transitions advance twice for one real-world event.', severity: 'data' };
  }
  return { text: `Two records are created for one intent (${words(action.name)}): corrupted totals, downstream jobs triggered twice, and manual clean-up.`, severity: 'data' };
}

function excludedFields(action: ActionConfig): FieldExclusion[] {
  const common: FieldExclusion[] = [];
  switch (action.trigger) {
    case 'http':
      common.push(
        { field: action.transport === 'server-action' ? 'the key argument' : action.transport === 'trpc' ? 'the idempotency key' : action.key?.field !== undefined && action.key.source !== 'derived' ? `Idempotency-Key header and the ${action.key.field} form field` : 'Idempotency-Key header', reason: 'it names the record; hashing it would make every key its own fingerprint' },
        { field: 'Authorization, cookies', reason: action.scope === 'global' ? 'they are not part of the intent; a refreshed token must still match' : 'identity is the key\'s scope, not part of the intent; a refreshed token must still match' },
        { field: 'User-Agent, X-Request-Id, traceparent', reason: 'they change on every retry without changing what the caller wants' },
      );
      break;
    case 'webhook':
      common.push(
        { field: 'signature header and its timestamp', reason: 'the provider re-signs every delivery attempt' },
        { field: 'delivery attempt metadata', reason: 'attempt counters and pending-delivery counts change between resends of the same event' },
      );
      break;
    case 'consumer':
      common.push(
        { field: 'delivery tag, redelivered flag, attempt count', reason: 'the broker changes them on every redelivery of the same message' },
        { field: 'trace headers', reason: 'tracing context differs per delivery' },
      );
      break;
    case 'cron':
      common.push(
        { field: 'actual start time, host name, process id', reason: 'they differ between overlapping runs of the same scheduled slot' },
      );
      break;
  }
  common.push({ field: 'client timestamps (createdAt, sentAt)', reason: 'a retry carries a new timestamp for the same intent' });
  return common;
}

function defaultScope(action: ActionConfig): { scope: Scope; reason: string } {
  if (action.scope === 'global' && action.trigger === 'http') {
    return { scope: 'global', reason: globalHttpReason(action) };
  }
  if (action.scope) {
    return { scope: action.scope, reason: `Configured ${SCOPE_LABELS[action.scope]}.` };
  }
  switch (action.trigger) {
    case 'http':
      return { scope: 'user', reason: 'Keys come from authenticated callers; scoping them to the caller means one user can neither collide with nor probe another user\'s keys.' };
    case 'webhook':
      return { scope: 'account', reason: 'Events are unique per provider account; scoping by the receiving account keeps two connected accounts from colliding.' };
    case 'consumer':
      return { scope: 'global', reason: 'Messages carry ids that are unique across the queue, and no end user chooses them.' };
    case 'cron':
      return { scope: 'global', reason: 'A schedule slot is one intent for the whole system, whichever instance fires it.' };
  }
}

/**
 * An HTTP action keyed globally: no principal tells callers apart, so what a caller can reach with a key is the
 * whole design's exposure. Said with the key source the action actually has (see buildKey).
 */
function globalHttpReason(action: ActionConfig): string {
  const source = action.key?.source ?? 'client';
  const reach =
    source === 'derived'
      ? 'Its key is derived from request fields, so any caller who sends the same fields reaches the same record and gets its stored response: a probe needs only those values, so derive keys from values a caller cannot guess.'
      : `Its keys are ${source === 'server' ? 'ULIDs the server issues' : 'UUIDv4s (122 random bits) the client generates'}, which no one can guess, but anyone who learns one (from a log, a proxy, a shared device) can send it again: the same request then gets the stored response, another one a mismatch. Keep keys out of URLs and logs.`;
  return `Configured global scope: keys are not tied to a caller, since there is no authenticated principal to scope them to, so every caller shares one key space. ${reach} Set "scope": "user" once callers authenticate.`;
}

/** Where a client's key travels for each transport, as the generated code and apply's steps take it. */
function clientCarrier(action: ActionConfig): string {
  switch (action.transport) {
    case 'graphql':
      return "Idempotency-Key header of the GraphQL request that carries the mutation (UUIDv4 generated once per user intent); the resolver reads it through the GraphQL context and passes it to the claim, since the request goes to the GraphQL endpoint, not a route of the mutation's own";
    case 'trpc':
      return "a UUIDv4 generated once per user intent, sent with the tRPC call (for example in an Idempotency-Key header that the tRPC context reads) and passed by the procedure to the claim as its key; the procedure has no route of its own, so no route middleware can pick its calls out";
    case 'server-action':
      return "a UUIDv4 generated once per user intent on the client, passed as the Server Action's first argument (`idempotency-builder apply` gives the callers it finds `useIdempotencyKey()`); no header is involved";
    default:
      return 'Idempotency-Key request header (UUIDv4 generated once per user intent)';
  }
}

function buildKey(action: ActionConfig, scope: Scope, context: Pick<ActionContext, 'config' | 'broker' | 'forms'>): { key: ActionKeyDesign; bits: number; standard?: string; variable: string } {
  const prefix = `${SCOPE_EXAMPLES[scope]}_${toCodeName(action.name)}`;
  // Only an HTTP caller can send a key header; webhooks, messages and jobs are keyed by what the sender does send.
  const configured = action.key?.source ?? (action.trigger === 'http' ? 'client' : 'derived');
  const source = configured === 'client' && action.trigger !== 'http' ? 'derived' : configured;
  const field = action.key?.field;
  if (field !== undefined && source !== 'derived') {
    // A browser form sends no custom header: the page is rendered with a key of its own, posted back in a field.
    return {
      key: {
        source,
        sourceLabel: 'Issued with the form',
        carrier: formCarrier('Idempotency-Key', field, context.forms ?? []),
        field,
        ...(context.forms?.length ? { forms: context.forms.map((f) => ({ file: f.file, line: f.line })) } : {}),
        format: '{scope}_{action}_{uuid}',
        example: `${prefix}_${SAMPLE_UUID}`,
      },
      bits: action.key?.bits ?? 122,
      standard: action.key?.bits ? undefined : 'A UUIDv4',
      variable: 'the UUID',
    };
  }
  if (source === 'client') {
    return {
      key: {
        source,
        sourceLabel: 'Client-generated',
        carrier: clientCarrier(action),
        format: '{scope}_{action}_{uuid}',
        example: `${prefix}_${SAMPLE_UUID}`,
      },
      bits: action.key?.bits ?? 122,
      standard: action.key?.bits ? undefined : 'A UUIDv4',
      variable: 'the UUID',
    };
  }
  if (source === 'server') {
    return {
      key: {
        source,
        sourceLabel: 'Server-generated',
        carrier: 'issued by the server when the intent starts (e.g. on form render) and echoed back by the client',
        format: '{scope}_{action}_{ulid}',
        example: `${prefix}_01J9Z3K6V4Q2W8X5Y7T0R1S3N5`,
      },
      bits: action.key?.bits ?? 80,
      standard: action.key?.bits ? undefined : 'A ULID',
      variable: 'the ULID',
    };
  }
  const from = action.key?.from ?? defaultDerivation(action);
  return {
    key: {
      source,
      sourceLabel: action.trigger === 'webhook' ? 'Provider event id' : action.trigger === 'consumer' ? 'Message id' : action.trigger === 'cron' ? 'Job name + scheduled slot' : 'Derived from the request',
      carrier: derivedCarrier(action, from, context.broker ?? context.config.stack.broker),
      from,
      format: `{scope}_{action}_sha256(${from.join(' + ')})`,
      example: `${prefix}_${SAMPLE_HASH}`,
    },
    bits: action.key?.bits ?? 128,
    variable: `SHA-256 of ${from.join(', ')}, truncated to 128 bits`,
  };
}

/** Where a form-posted action's key comes from: minted per render, posted in a hidden field, the header still honoured. */
function formCarrier(header: string, field: string, forms: readonly FormLocation[]): string {
  const where = forms.length === 0 ? 'the form that posts it' : `the form${forms.length === 1 ? '' : 's'} at ${forms.map((f) => `${f.file}:${f.line}`).join(', ')}`;
  return `hidden ${field} field of ${where}, a UUIDv4 minted per render; the ${header} header when a script sends one`;
}

/** What each broker gives a message that stays the same on redelivery. */
const MESSAGE_IDS: Record<string, string> = {
  bullmq: 'the BullMQ job id (`job.id`, a `jobId` the producer sets)',
  bull: 'the Bull job id (`job.id`, a `jobId` the producer sets)',
  sqs: 'the SQS MessageId (or the MessageDeduplicationId of a FIFO queue)',
  rabbitmq: 'the `messageId` property the producer sets (RabbitMQ assigns none)',
  nats: 'the `Nats-Msg-Id` header the producer sets',
  kafka: 'an id the producer puts in a header or the message key (Kafka assigns none; topic, partition and offset change when a message is produced again)',
};

/** Where a derived key comes from, in the sender's own terms: never a header the sender does not send. */
function derivedCarrier(action: ActionConfig, from: readonly string[], broker: string): string {
  const fields = from.join(' + ');
  const plain = from.length === 1 && /^(id|eventId|event\.id)$/.test(from[0]!);
  switch (action.trigger) {
    case 'webhook':
      if (action.provider === 'stripe') return `the Stripe event id: \`event.id\` of the event stripe.webhooks.constructEvent verified, the same on every resend${plain ? '' : ` (key fields: ${fields})`}; Stripe sends no Idempotency-Key header`;
      if (action.provider === 'adyen') return `pspReference + eventCode of each notification item, since one payment has several event codes and each is applied once${from.join() === 'pspReference,eventCode' ? '' : ` (key fields: ${fields})`}; Adyen sends no Idempotency-Key header`;
      if (action.provider === 'paypal') return `the PayPal webhook event id: \`id\` of the verified event, the same on every resend${plain ? '' : ` (key fields: ${fields})`}; PayPal sends no Idempotency-Key header`;
      return `the sender's event id (${fields}), the same on every resend; the sender sends no Idempotency-Key header`;
    case 'consumer': {
      // The action's own broker as init's snapshot recorded it, else the config's: generate reads no code.
      const id = MESSAGE_IDS[broker] ?? "the broker's message id (BullMQ `job.id`, SQS MessageId, a RabbitMQ messageId property)";
      return `${fields}: ${id} or a business key from the payload, the same on every redelivery`;
    }
    case 'cron':
      return `${fields}: the job's name and the slot it was scheduled for (not when it started), the same for every instance that fires it`;
    default:
      return `computed by the server from ${fields}`;
  }
}

function defaultDerivation(action: ActionConfig): string[] {
  switch (action.trigger) {
    case 'webhook':
      return action.provider === 'adyen' ? ['pspReference', 'eventCode'] : ['eventId'];
    case 'consumer':
      return ['messageId'];
    case 'cron':
      return ['jobName', 'scheduledFor'];
    default:
      return action.significantFields;
  }
}

function describeRecovery(action: ActionConfig, leaseText: string, steps: StepDesign[]): string {
  const provider = action.provider && action.provider !== 'bank-transfer' ? PROVIDER_LABELS[action.provider] : undefined;
  const parts: string[] = [];
  switch (action.trigger) {
    case 'http':
      parts.push(`If the worker dies after claiming the key, the claim's lease lapses after ${leaseText}; the client's retry reclaims it with a new fencing token and runs the action again, and the dead worker's late write is rejected.`);
      break;
    case 'webhook':
      parts.push(`If the worker dies mid-event it never answers 2xx, so the provider resends; once the lease (${leaseText}) lapses the resend reclaims the event key and applies it once.`);
      break;
    case 'consumer':
      parts.push(`The message is acknowledged only after the record is COMPLETED; a crash leaves it unacknowledged, the broker redelivers it, and the redelivery reclaims the key once the lease (${leaseText}) lapses.`);
      break;
    case 'cron':
      parts.push(`An overlapping or restarted run sees the slot's key as in flight and stops; after a crash the next attempt reclaims the slot once the lease (${leaseText}) lapses, and per-item keys inside the batch skip items already done.`);
      break;
  }
  if (provider && action.trigger === 'webhook') {
    parts.push(`The ${provider} event id decides the key, so however often ${provider} resends, the event is applied once; anything the handler calls downstream carries a key derived from the event key, so a re-run after a crash cannot repeat it.`);
  } else if (provider) {
    parts.push(`Re-execution is safe at the provider because the ${provider} key is derived from the local key, so ${provider} returns the original result instead of repeating the call. If ${provider} succeeded but the local write did not, the retry gets that original result back from ${provider} and completes the local record; past ${provider}'s own key window only a manual check against the ${provider} dashboard settles it.`);
  } else if (action.provider === 'bank-transfer') {
    parts.push('Bank transfers have no provider-side deduplication: the local key goes into the payment reference, the transfer is submitted only from a COMPLETED claim, and reconciliation against the bank statement resolves any doubt before a manual resubmission.');
  }
  if (steps.length > 1) {
    parts.push(`The retry resumes at the first step not marked done (each of the ${steps.length} steps has its own sub-key); a permanent failure runs the compensations in reverse order.`);
  }
  return parts.join(' ');
}

/** What a transactional handler's `context.db` is, per store the scaffold generates (PostgreSQL otherwise). */
const TRANSACTION_CLIENT: Record<string, string> = {
  mysql: 'a mysql2 pool connection',
  mariadb: 'a mysql2 pool connection',
  sqlite: 'a better-sqlite3 connection of its own',
};

/**
 * Transactional when everything the action changes lives in the store's database (one transaction covers claim,
 * writes and completion); lease when it reaches outside (a provider, or saga steps that call other services). A
 * Redis or DynamoDB store has no transaction to share with the action's writes, so there every action runs in lease mode.
 */
const WRITE_NOUNS = { create: 'the insert into', upsert: 'the upsert of', update: 'the update of', delete: 'the delete from' } as const;

function decideMode(action: ActionConfig, context: ActionContext): { mode: 'transactional' | 'lease'; reason: string } {
  const { databaseLabel, facts } = context;
  const database = context.config.stack.database;
  const calls = facts?.calls ?? [];
  const sent = facts?.messages ?? [];
  const external = action.provider !== undefined || (action.steps ?? []).length > 0 || calls.length > 0 || sent.length > 0;
  const leaseOnly = !STORE_FACTS[database].transactional;
  // Writes the code makes through its own connections (an ORM, its pool): a rollback of the claim leaves them in place.
  const ownWrite = facts && !facts.claimTransaction ? facts.writes[0] : undefined;
  // Writes the handler makes on the claim's own transaction (idempotencyOf(…).db, or apply's transactionOf accessor).
  const claimWrite = facts?.claimTransaction ? facts.writes[0] : undefined;
  const onClaim = claimWrite && `its writes, starting with ${WRITE_NOUNS[claimWrite.kind]} ${claimWrite.target} at ${claimWrite.file}:${claimWrite.line}, run on the claim's transaction`;
  const mode = leaseOnly ? 'lease' : (action.mode ?? (external || ownWrite ? 'lease' : 'transactional'));
  const why = leaseOnly
    ? STORE_FACTS[database].leaseOnly
      ? `${STORE_FACTS[database].leaseOnly}, so every action runs in lease mode`
      : `the ${database === 'redis' ? 'Redis' : 'DynamoDB'} store has no transaction that could include the action's own writes, so every action runs in lease mode`
    : action.mode
      ? action.mode === 'transactional' && onClaim && !external
        ? `set in the configuration; ${onClaim}`
        : 'set in the configuration'
      : !external && ownWrite
        ? `its writes, starting with ${WRITE_NOUNS[ownWrite.kind]} ${ownWrite.target} at ${ownWrite.file}:${ownWrite.line}, go through the project's own database connection rather than the claim's transaction, so rolling the claim back would leave them in place (only writes made through the claim's own connection, idempotencyOf(…).db, commit with it; a handler moved onto it may set "mode": "transactional")`
      : external
        ? action.provider && facts && calls.length === 0
          ? `the configuration names ${PROVIDER_LABELS[action.provider]} for it, though its code makes no ${PROVIDER_LABELS[action.provider]} call`
          : action.provider || calls.length > 0
            ? `it calls ${action.provider ? PROVIDER_LABELS[action.provider] : calls.map((c) => c.provider).filter((v, i, a) => a.indexOf(v) === i).join(' and ')}, an effect no database transaction can undo`
            : sent.length > 0 && (action.steps ?? []).length === 0
              ? `it sends ${sent[0]!.channel === 'email' ? 'an e-mail' : sent[0]!.channel === 'sms' ? 'a text message' : 'a push notification'} (${sent[0]!.operation} at ${sent[0]!.file}:${sent[0]!.line}), which no database transaction can take back`
              : 'its saga steps reach other services, which no database transaction can undo'
        : onClaim ?? `no provider or saga step is declared, so its effects are taken to be writes to ${databaseLabel}`;
  const client = TRANSACTION_CLIENT[database] ?? 'a node-postgres client';
  return {
    mode,
    reason:
      mode === 'transactional'
        ? `Transactional (${why}): the claim, the handler's writes through the transaction it is given, and the completion commit together; a crash or a failed completion rolls all of it back and the retry runs cleanly. The transaction is ${client} (context.db): a handler that writes through an ORM's own connections gets none of this and must set "mode": "lease".`
        : `Lease (${why}): the claim commits first and a lease with a fencing token guards the run; a completion that cannot be recorded is retried with the same token, then reported as "outcome unknown", and a retry re-runs with the same provider keys.`,
  };
}

export function buildAction(action: ActionConfig, context: ActionContext): ActionDesign {
  const http = parseHttpRoute(action.route);
  const { ms: durationMs, assumed } = expectedDuration(action);
  const worst = context.facts ? worstCaseOf(context.facts.budgets, context.facts.platformCap) : undefined;
  // Code that makes no provider call has no provider client whose time-out the lease must outlast.
  const leaseAction = context.facts && context.facts.calls.length === 0 ? { ...action, provider: undefined } : action;
  const lease = decideLease(leaseAction, durationMs, assumed, context.config.concurrency, worst);
  const code = context.facts ? codeDesign(context.facts) : undefined;
  const codeImpact = code && !action.duplicateImpact ? impactFromCode(code, action.trigger) : undefined;
  const mode = decideMode(action, context);
  const { scope, reason: scopeReason } = defaultScope(action);
  const { key, bits, standard, variable } = buildKey(action, scope, context);
  const codeName = toCodeName(action.name);
  const configured = new Set<RetrySource>(context.config.retrySources);
  const possible = retrySourcesOf(action);
  const relevant = possible.filter((source) => configured.has(source) || configured.size === 0);
  const retrySources = (relevant.length > 0 ? relevant : possible.slice(0, 1)).map((id) => ({
    id,
    label: RETRY_SOURCE_TEXT[id].label,
    how: RETRY_SOURCE_TEXT[id].how,
  }));
  const steps: StepDesign[] = (action.steps ?? []).map((step, index) => {
    const subKey = `${key.example}_${index + 1}`;
    const stepProvider = step.provider;
    return {
      index: index + 1,
      name: step.name,
      compensation: step.compensation,
      provider: stepProvider,
      subKeyExample: subKey,
      providerKeyExample: stepProvider ? deriveProviderKeyExample(stepProvider, key.example, index + 1, scope === 'global' ? 'global' : 'user-42', codeName) : undefined,
    };
  });
  const impact = codeImpact ?? describeImpact(action);
  const keysInWindow = Math.max(1, Math.round((context.volumePerDay * context.retentionMs) / 86_400_000));
  return {
    name: action.name,
    slug: context.slug,
    codeName,
    trigger: action.trigger,
    triggerLabel: action.transport && action.trigger === 'http' ? TRANSPORT_LABELS[action.transport] : TRIGGER_LABELS[action.trigger],
    route: action.route,
    ...(action.transport && action.trigger === 'http' ? { transport: action.transport } : {}),
    ...(action.trigger === 'consumer' && (context.broker ?? context.config.stack.broker) !== 'none' ? { broker: context.broker ?? context.config.stack.broker } : {}),
    method: http?.method,
    path: http?.path,
    source: action.source,
    executes: code && !action.description ? describeFromCode(code, context.databaseLabel) : describeExecution(action, context.databaseLabel),
    duplicateImpact: impact.text,
    severity: impact.severity,
    retrySources,
    significantFields: [...action.significantFields],
    excludedFields: excludedFields(action),
    recovery: describeRecovery(action, describeDuration(lease.lockTimeoutMs), steps),
    key,
    scope,
    scopeLabel: SCOPE_LABELS[scope],
    scopeReason,
    provider: action.provider,
    steps,
    expectedDurationMs: durationMs,
    durationAssumed: assumed,
    mode: mode.mode,
    modeReason: mode.reason,
    ...(action.rollout === 'log-only' ? { rollout: 'log-only' as const } : {}),
    lockTimeoutMs: lease.lockTimeoutMs,
    lockJustification: lease.justification,
    heartbeatMs: lease.heartbeatMs,
    volumePerDay: context.volumePerDay,
    uniqueness: assessUniqueness({ bits, keysInWindow, standardFormat: standard, variableParts: variable }),
    existing: context.existing,
    findings: [],
    ...(code ? { code } : {}),
  };
}
