import { describeDuration } from '../../config/duration.js';
import { TRANSPORT_LABELS, transportName } from '../labels.js';
import { STORE_FACTS } from '../storeFacts.js';
import { workerKinds } from '../workerOutcomes.js';
import type { ActionDesign, BuildStep, DesignModel, MetricDesign, RunbookEntry, SecurityItem, TestScenario } from '../types.js';

const PROVIDER_LOOKUP: Record<string, string> = {
  stripe: "Stripe by a search on metadata['idempotency_key_hash']",
  adyen: 'Adyen by the merchant reference ({key}_{step})',
  paypal: 'PayPal by re-sending the call with the same PayPal-Request-Id inside its window, which returns the original result',
  'bank-transfer': 'the bank statement by the remittance reference',
};

type Ctx = Pick<DesignModel, 'actions' | 'responses' | 'retention' | 'storage' | 'providers' | 'sagas' | 'stack' | 'cleanup' | 'detection'>;

const maxLease = (actions: readonly ActionDesign[]) => Math.max(...actions.map((a) => a.lockTimeoutMs));

/** HTTP actions whose keys belong to no caller: there is no principal to isolate them by. */
const globalHttp = (actions: readonly ActionDesign[]) => actions.filter((a) => a.trigger === 'http' && a.scope === 'global');

const names = (actions: readonly ActionDesign[]) => actions.map((a) => a.name).join(', ');

export function buildSecurity(ctx: Ctx): SecurityItem[] {
  const financial = ctx.actions.some((a) => a.severity === 'financial');
  const clientKeys = ctx.actions.filter((a) => a.key.source === 'client');
  const shared = globalHttp(ctx.actions);
  const scopedClientKeys = clientKeys.filter((a) => !shared.includes(a));
  const sharedClientKeys = clientKeys.filter((a) => shared.includes(a));
  return [
    {
      topic: 'Key scope and enumeration',
      decision: ctx.stack.worker
        ? "Every record is keyed by (scope, key). Consumers and cron jobs use the system scope 'global' (idempotentHandler's scope option narrows it), and every key carries its action or job name, so two actions never share a record. No principal chooses a key and nothing here answers a key-status lookup, so the spec's \"key from a different user → 404\" has no caller to apply to; an HTTP front end added later scopes its own keys to the caller."
        : 'Every record is keyed by (scope, key), where scope is the authenticated principal (or the provider account / system scope for webhooks, consumers and jobs). A key that another principal already used is simply a new key for this caller: it runs as their own request and never sees or replays the other record. Any key-status lookup answers 404 for keys the caller does not own, so the existence of someone else\'s key is never confirmed. This is how the design reads "key from a different user → 404": isolation rather than rejection, because rejecting would itself confirm that the key exists.' +
        (shared.length > 0
          ? ` Not for ${names(shared)}: ${shared.length === 1 ? 'its' : 'their'} scope is global (no authenticated caller to scope to), so every caller shares one key space, and whoever sends a key that was already used gets the stored response for the same request, or the mismatch answer for another one. The key itself is the only secret there.`
          : ''),
    },
    {
      topic: 'Timing-safe fingerprint comparison',
      decision: 'Fingerprints are compared with crypto.timingSafeEqual on equal-length buffers, so response time reveals nothing about how much of a stored hash matched.',
    },
    {
      topic: 'Replay after expiry',
      decision: `A record past its expiry (${ctx.retention.label}) is never revived: the claim statement treats it as absent and starts a fresh record with a new fencing token. Clients must not retry later than the retention window.`,
    },
    {
      topic: 'Key guessability',
      decision:
        clientKeys.length > 0
          ? `Client keys (${names(clientKeys)}) must be UUIDv4 or another format with at least 122 random bits; the ${ctx.stack.plain ? 'wrapper throws InvalidKeyError for' : 'middleware rejects'} keys longer than 255 characters or containing control characters.${scopedClientKeys.length > 0 ? ` Because records ${sharedClientKeys.length > 0 ? `of ${names(scopedClientKeys)} ` : ''}are scoped to the caller, a guessed key only ever reaches the guesser's own records.` : ''}${sharedClientKeys.length > 0 ? ` ${names(sharedClientKeys)} ${sharedClientKeys.length === 1 ? 'is' : 'are'} global: the random bits are all that keeps one caller from another's records, so a key that leaks (a log line, a proxy, a shared device) can be replayed by anyone until it expires; keys never go into URLs or logs.` : ''}`
          : 'Keys are derived on the server from provider or message identifiers; callers cannot choose them.',
    },
    {
      topic: 'Rate limiting key creation',
      decision: ctx.stack.worker
        ? 'Keys come from message ids and schedule slots, not from callers, so there is no caller to throttle. A rise in new keys without a rise in work means a producer gives the same work a new id on each publish or redelivery; fix the producer, since each new id runs the work again.'
        : ctx.stack.plain
        ? 'idempotency.keys_created_per_user is tracked per principal; above 100 new keys a minute the caller is throttled before the wrapper is called (in your API layer or at the edge), so no record is written. The wrapper has no rate limiter of its own, and an error thrown before or inside it is never stored.'
        : 'idempotency.keys_created_per_user is tracked per principal; above 100 new keys a minute the caller is throttled with 429 before a record is written (429s are never stored).',
    },
    {
      topic: 'What a conflict reveals',
      decision: ctx.stack.worker
        ? 'Nothing: a consumer only acknowledges or leaves a message for redelivery, and a cron run only skips its slot. No stored result or fingerprint is sent anywhere.'
        : ctx.stack.plain
        ? 'The MismatchError thrown for a reused key states only that the key was used with a different request. It carries no stored result, stored fingerprint or original input, so whatever your resolver or procedure makes of it cannot leak them.'
        : `A ${ctx.responses.mismatchStatus} for a reused key states only that the key was used with different parameters. It never includes the stored body, the stored fingerprint or the original request.`,
    },
    {
      topic: ctx.stack.worker ? 'Personal data in stored records' : ctx.stack.plain ? 'Personal data in stored results' : 'Personal data in stored responses',
      decision: ctx.stack.worker
        ? 'A record holds no message payload: a handled message stores {"done":true}, a cron run its job name and slot, and a message marked FAILED the error\'s message. Keep personal data out of error messages thrown by handlers; records expire with the retention window.'
        : ctx.stack.plain
        ? `Stored results (the JSON each wrapped function returns) ${financial ? 'can hold payment and' : 'may hold'} personal data: keep the table under the same encryption-at-rest${financial ? ', backup' : ''} and access rules as the data it mirrors; it expires with the retention window. A function whose repeat only needs an id or a status should return just that.`
        : financial
        ? 'Stored response bodies can hold payment and personal data: the table lives under the same encryption-at-rest, backup and access controls as the payments tables, and expires with the retention window. For non-payment actions where a replay only needs the status, store the status and a hash of the body instead.'
        : 'Stored response bodies may hold personal data: keep the table under the same encryption-at-rest and access rules as the data it mirrors; it expires with the retention window.',
    },
    {
      topic: 'Log hygiene',
      decision: 'Logs and traces carry at most the first 8 characters of a SHA-256 of the key for correlation. Keys, fingerprints and bodies are never logged; the generated code has no log line that prints them.',
    },
  ];
}

export function buildMetrics(ctx: Ctx): MetricDesign[] {
  const lease = maxLease(ctx.actions);
  const p99Budget = Math.round(lease / 2);
  return [
    {
      name: 'idempotency.duplicates_blocked',
      promName: 'idempotency_duplicates_blocked_total',
      type: 'counter',
      labels: ['action', 'outcome'],
      meaning: ctx.stack.worker ? "Messages or slots the store found already done (outcome 'duplicate') or still held (outcome 'busy' for a message, 'overlap' for a cron run), by action." : ctx.stack.plain ? 'Calls answered from the store (the stored result) or refused while in flight (InFlightError), by action.' : 'Requests answered from the store (replay) or refused while in flight, by action.',
      alert: ctx.stack.worker ? 'Page when the rate is 3× its 1-day baseline for 15 minutes: a redelivery storm (a consumer that fails to acknowledge, or a broker replaying).' : 'Page when the rate is 3× its 1-day baseline for 15 minutes: a client or proxy retry storm.',
      alertExpr: 'sum by (action) (rate(idempotency_duplicates_blocked_total[15m])) > 3 * sum by (action) (rate(idempotency_duplicates_blocked_total[1d] offset 1d)) and sum by (action) (rate(idempotency_duplicates_blocked_total[15m])) > 0.1',
      severity: 'page',
    },
    {
      name: 'idempotency.lock_timeouts',
      promName: 'idempotency_lock_timeouts_total',
      type: 'counter',
      labels: ['action'],
      meaning: 'Claims whose lease ran out before the action completed: crashes, or actions slower than their lease.',
      alert: 'Ticket when above 0 for 10 minutes; page above 1 per minute.',
      alertExpr: 'sum by (action) (increase(idempotency_lock_timeouts_total[10m])) > 0',
      severity: 'ticket',
    },
    {
      name: 'idempotency.fingerprint_mismatches',
      promName: 'idempotency_fingerprint_mismatches_total',
      type: 'counter',
      labels: ['action'],
      meaning: ctx.stack.worker ? "A key found with another fingerprint. Not expected here: a consumer's fingerprint is derived from its key, so the handler treats such a message as a duplicate; a count means a record under that key was written by other code." : ctx.stack.plain ? 'Keys reused with a different input (MismatchError thrown): client bugs or abuse.' : `Keys reused with different parameters (answered ${ctx.responses.mismatchStatus}): client bugs or abuse.`,
      alert: 'Ticket when more than 5 in 10 minutes for one action.',
      alertExpr: 'sum by (action) (increase(idempotency_fingerprint_mismatches_total[10m])) > 5',
      severity: 'ticket',
    },
    {
      name: 'idempotency.store_size',
      promName: 'idempotency_store_rows',
      type: 'gauge',
      labels: [],
      meaning: 'Records in the store (an estimate where the database keeps one), read from the store when Prometheus scrapes.',
      alert: `Ticket when it grows for 6 hours without a drop: ${ctx.cleanup.job ? 'cleanup is not running' : 'records are not expiring'}.`,
      alertExpr: 'sum(idempotency_store_rows) > 0 and sum(delta(idempotency_store_rows[6h])) > 0 and sum(min_over_time(idempotency_store_rows[6h])) == sum(idempotency_store_rows offset 6h)',
      severity: 'ticket',
    },
    {
      name: 'idempotency.processing_duration_ms',
      promName: 'idempotency_processing_duration_ms',
      type: 'histogram',
      labels: ['action', 'outcome'],
      meaning: 'Time from claim to completion; an action whose p99 approaches its lease risks being run twice.',
      alert: `Ticket when p99 exceeds half the action's lease (${describeDuration(p99Budget)} for the longest lease here) for 15 minutes.`,
      alertExpr: `histogram_quantile(0.99, sum by (action, le) (rate(idempotency_processing_duration_ms_bucket[15m]))) > ${p99Budget}`,
      severity: 'ticket',
    },
    {
      name: 'idempotency.keys_created_per_user',
      promName: 'idempotency_keys_created_total',
      type: 'counter',
      labels: ['action'],
      meaning: 'New keys claimed. Per-principal counts live in the rate limiter, not in metric labels, to keep cardinality bounded.',
      alert: 'Page when any principal exceeds 100 new keys per minute (raised by the rate limiter as an event).',
      alertExpr: 'sum(rate(idempotency_keys_created_total[5m])) * 60 > 100 * count(count by (action) (idempotency_keys_created_total))',
      severity: 'page',
    },
    {
      name: 'idempotency.orphan_reclaims',
      promName: 'idempotency_orphan_reclaims_total',
      type: 'counter',
      labels: ['action'],
      meaning: 'Expired leases taken over by a retry: each one is a worker that died or stalled mid-action.',
      alert: 'Ticket when sustained above 0 for 30 minutes.',
      alertExpr: 'sum by (action) (increase(idempotency_orphan_reclaims_total[30m])) > 0',
      severity: 'ticket',
    },
    {
      name: 'idempotency.store_errors',
      promName: 'idempotency_store_errors_total',
      type: 'counter',
      labels: ['operation'],
      meaning: (ctx.stack.worker
        ? `Store calls that failed or exceeded ${describeDuration(ctx.detection.storeTimeoutMs)}: a failed claim throws StoreUnavailableError, so the message stays unacknowledged (or the cron run fails) and nothing runs; a failed completion is retried, then throws OutcomeUnknownError.`
        : ctx.stack.plain
        ? `Store calls that failed or exceeded ${describeDuration(ctx.detection.storeTimeoutMs)}: a failed claim throws StoreUnavailableError; a failed completion is retried, then throws OutcomeUnknownError.`
        : `Store calls that failed or exceeded ${describeDuration(ctx.detection.storeTimeoutMs)}; each became a 503.`)
        + (ctx.actions.some((action) => action.rollout === 'log-only') ? ' An action in log-only rollout runs anyway instead.' : ''),
      alert: 'Page when more than 1% of requests hit a store error for 5 minutes.',
      alertExpr: 'sum(rate(idempotency_store_errors_total[5m])) > 0.01 * sum(rate(idempotency_requests_total[5m]))',
      severity: 'page',
    },
    {
      name: 'idempotency.outcome_unknown',
      promName: 'idempotency_outcome_unknown_total',
      type: 'counter',
      labels: ['action'],
      meaning: `Actions that ran but whose result could not be recorded: lease mode after ${describeDuration(ctx.detection.completionRetryMs)} of completion retries with the same fencing token, or a transactional COMMIT whose answer was lost. ${ctx.stack.worker ? 'OutcomeUnknownError left the message unacknowledged (or failed the cron run)' : ctx.stack.plain ? 'The caller got OutcomeUnknownError' : 'The client was told the outcome is unknown'}; the record stays PROCESSING until its lease lapses.`,
      alert: ctx.stack.worker ? 'Page on any occurrence: check whether the work happened (by its derived key) before the lease lapses and the next delivery runs it again.' : 'Page on any occurrence: reconcile the record with the provider (by its derived key) before the client retries.',
      alertExpr: 'sum by (action) (increase(idempotency_outcome_unknown_total[5m])) > 0',
      severity: 'page',
    },
    {
      name: 'idempotency.log_only',
      promName: 'idempotency_log_only_total',
      type: 'counter',
      labels: ['action', 'would'],
      meaning: `Actions with "rollout": "log-only": ${ctx.stack.worker ? 'messages or runs' : ctx.stack.plain ? 'calls' : 'requests'} that ran although enforcement would have answered them otherwise; the would label is replay, mismatch, in-flight, not-replayable, refuse (no usable key or principal) or store-unavailable.`,
      alert: 'Informational: read it before switching an action to "enforce".',
      severity: 'info',
    },
    // A store that expires its own records has no cleanup job to count.
    ...(ctx.cleanup.job ? [{
      name: 'idempotency.cleanup_deleted_rows',
      promName: 'idempotency_cleanup_deleted_rows_total',
      type: 'counter',
      labels: [],
      meaning: 'Expired records the cleanup job deleted (the job also prints the count, and pushes it when PUSHGATEWAY_URL is set).',
      alert: 'Informational: compare with idempotency_store_rows to see that cleanup keeps up.',
      severity: 'info',
    } satisfies MetricDesign] : []),
    {
      name: 'idempotency.oldest_in_flight_age_seconds',
      promName: 'idempotency_oldest_in_flight_age_seconds',
      type: 'gauge',
      labels: [],
      meaning: 'Age of the oldest PROCESSING record; a stuck claim shows up here before users complain.',
      alert: `Ticket when above ${describeDuration(lease * 2)} (twice the longest lease).`,
      alertExpr: `idempotency_oldest_in_flight_age_seconds > ${Math.round((lease * 2) / 1000)}`,
      severity: 'ticket',
    },
  ];
}

export function buildTests(ctx: Ctx): TestScenario[] {
  if (ctx.stack.worker) return buildWorkerTests(ctx);
  if (ctx.stack.plain) return buildWrapperTests(ctx);
  const first = ctx.actions[0]!;
  const saga = ctx.sagas[0];
  const label = first.transport ? `The ${TRANSPORT_LABELS[first.transport]} ${transportName(first)}` : (first.route ?? first.name);
  const status = ctx.responses.mismatchStatus;
  return [
    { id: 'first-request', name: 'First request', input: `${label} with a new key`, expected: 'The action runs once; its response is stored, then sent.', verifies: 'Happy path' },
    { id: 'replay', name: 'Same key, same body, again', input: 'The identical request repeated after completion', expected: 'The stored status, headers and exact body bytes, with Idempotent-Replayed: true; the action does not run again.', verifies: 'Core idempotency' },
    { id: 'mismatch', name: 'Same key, different body', input: `The key reused with a different ${first.significantFields[0] ?? 'significant field'}`, expected: `${status} problem+json saying the key was used with different parameters; no stored body in the answer.`, verifies: 'Fingerprint mismatch detection' },
    { id: 'concurrent', name: 'Concurrent duplicates', input: '50 identical requests with one key at the same moment', expected: 'The action runs exactly once; every other request gets 409 with Retry-After or the replayed response; none gets a 5xx.', verifies: 'Lock correctness', concurrent: true },
    first.trigger === 'http' && first.scope === 'global'
      ? { id: 'other-principal', name: 'Key used by another caller', input: 'A second caller sends a key the first caller already used (global scope: no principal tells them apart)', expected: 'The same request gets the stored response; a different one gets the mismatch answer; the action does not run again.', verifies: 'Global key space (the key is the only secret)' }
      : { id: 'other-principal', name: 'Key used by another principal', input: 'User B sends a key that user A already used', expected: "B's request runs as B's own new key; A's response is never returned; a key-status lookup by B for A's key answers 404.", verifies: 'Scope isolation' },
    { id: 'expired', name: 'Retry after expiry', input: `The same key after ${ctx.retention.label}`, expected: 'Treated as a new request.', verifies: 'Expiration logic' },
    { id: 'crash', name: 'Crash mid-action, then retry', input: 'The worker is killed after claiming; the client retries', expected: `409 while the lease (${describeDuration(first.lockTimeoutMs)}) is live; afterwards the retry reclaims, runs once, and the killed worker's late write is rejected.`, verifies: 'Partial failure recovery' },
    saga
      ? { id: 'saga-resume', name: 'Saga step fails, retry', input: `${saga.action}: step 2 (${saga.steps[1]?.name ?? 'second step'}) fails transiently, then the request is retried`, expected: `Resumes at ${saga.steps[1]?.name ?? 'step 2'}; ${saga.steps[0]?.name ?? 'step 1'} is not repeated.`, verifies: 'Multi-step idempotency' }
      : { id: 'saga-resume', name: 'Multi-step retry (no saga here)', input: 'The action fails after its first write, then is retried', expected: 'The claim was released, the retry re-runs the action as a whole, and downstream keys derived from the local key stop any duplicate effect.', verifies: 'Multi-step idempotency' },
    { id: 'store-down', name: 'Store unavailable', input: 'The database stops answering', expected: `503 with Retry-After within ${describeDuration(ctx.detection.storeTimeoutMs)}; the action never runs unprotected.`, verifies: 'Fail closed' },
    { id: 'action-error', name: 'Action fails with a 5xx', input: 'The handler throws', expected: 'The claim is released and the next retry runs the action again.', verifies: 'Transient failures stay retryable' },
  ];
}

/**
 * The scenarios as idempotentHandler and CronGuard meet them: outcomes and acknowledgements. Consumer scenarios when
 * the design has consumers (with the overlap of one cron slot when it has jobs too), else the cron guard's.
 */
function buildWorkerTests(ctx: Ctx): TestScenario[] {
  const kinds = workerKinds(ctx.actions, ctx.stack.broker);
  const saga = ctx.sagas[0];
  const timeout = describeDuration(ctx.detection.storeTimeoutMs);
  const overlap: TestScenario = { id: 'cron-overlap', name: 'One slot fired twice', input: 'Two instances fire the same slot of a cron job at the same moment', expected: "One run gets 'ran'; the other gets 'overlap' (or 'duplicate' once the first finished); the job runs once for the slot.", verifies: 'Overlap guard' };
  if (!kinds.consumers) {
    const job = ctx.actions[0]!;
    return [
      { id: 'first-request', name: 'First fire of a slot', input: `${job.name} fired for a new slot`, expected: "The job runs once; the slot is recorded COMPLETED; the outcome is 'ran'.", verifies: 'Happy path' },
      { id: 'replay', name: 'Same slot fired again', input: 'The same slot fired after the run finished (a late instance, a restart)', expected: "Outcome 'duplicate': the job does not run again.", verifies: 'Core idempotency' },
      { ...overlap, id: 'concurrent', name: 'Concurrent fires', input: '50 fires of one slot at the same moment', expected: "The job runs exactly once; every other fire gets 'overlap' or 'duplicate'; none runs the job.", concurrent: true },
      { id: 'expired', name: 'Fire after expiry', input: `The same slot fired after ${ctx.retention.label}`, expected: 'Treated as a new slot: the job runs again.', verifies: 'Expiration logic' },
      { id: 'crash', name: 'Crash mid-run, then re-fire', input: 'The instance is killed after claiming the slot; the slot is fired again', expected: `'overlap' while the lease (${describeDuration(job.lockTimeoutMs)}) is live; afterwards the re-fire reclaims, runs once, and the killed run's late completion is rejected (LeaseLostError).`, verifies: 'Partial failure recovery' },
      { id: 'store-down', name: 'Store unavailable', input: 'The database stops answering', expected: `StoreUnavailableError within ${timeout} before the job runs; the run fails and the slot stays unclaimed.`, verifies: 'Fail closed' },
      { id: 'action-error', name: 'The job throws', input: 'The job throws halfway', expected: 'The claim is released and the error rethrown; the next fire of the slot runs it again, and per-item keys (runItem) skip the items already done.', verifies: 'Transient failures stay retryable' },
    ];
  }
  const first = ctx.actions.find((a) => a.trigger === 'consumer')!;
  const label = `${first.name}${first.route ? ` (${first.route})` : ''}`;
  return [
    { id: 'first-request', name: 'First delivery', input: `A message for ${label} with a new message id`, expected: "The handler runs once; the record is COMPLETED before the outcome 'done', and only then is the message acknowledged.", verifies: 'Happy path' },
    { id: 'replay', name: 'Same message delivered again', input: 'The broker redelivers the message after it was handled', expected: "Outcome 'duplicate': acknowledged, and the handler does not run again.", verifies: 'Core idempotency' },
    { id: 'mismatch', name: 'Same id, different payload', input: 'A second message reuses the id with another payload', expected: "Outcome 'duplicate': the id decides, so the handler does not run; distinct messages need distinct ids.", verifies: 'Fingerprint derived from the message id' },
    { id: 'concurrent', name: 'Concurrent duplicates', input: '50 copies of one message delivered to several consumers at the same moment', expected: "The handler runs exactly once; every other copy gets 'duplicate' (acknowledged) or 'busy' (left unacknowledged, delivered again later); none runs the handler.", verifies: 'Lock correctness', concurrent: true },
    { id: 'other-principal', name: 'Same id for another action', input: 'Another consumer action receives a message with the same id', expected: 'It runs: the key carries the action name, so two actions never share a record.', verifies: 'Key isolation between actions' },
    { id: 'expired', name: 'Redelivery after expiry', input: `The same message delivered after ${ctx.retention.label}`, expected: 'Treated as new: the handler runs again.', verifies: 'Expiration logic' },
    { id: 'crash', name: 'Consumer killed mid-handler', input: 'The consumer dies after claiming; the broker redelivers', expected: `The message was never acknowledged; copies delivered while the lease (${describeDuration(first.lockTimeoutMs)}) is live get 'busy'; afterwards the next one reclaims, runs once, and the killed consumer's late completion is rejected (LeaseLostError).`, verifies: 'Partial failure recovery' },
    saga
      ? { id: 'saga-resume', name: 'Saga step fails, redelivery', input: `${saga.action}: step 2 (${saga.steps[1]?.name ?? 'second step'}) fails transiently, then the message is delivered again`, expected: `Resumes at ${saga.steps[1]?.name ?? 'step 2'}; ${saga.steps[0]?.name ?? 'step 1'} is not repeated.`, verifies: 'Multi-step idempotency' }
      : { id: 'saga-resume', name: 'Multi-step retry (no saga here)', input: 'The handler fails after its first write, then the message is delivered again', expected: 'The claim was released, the redelivery runs the handler as a whole, and downstream keys derived from the local key stop any duplicate effect.', verifies: 'Multi-step idempotency' },
    { id: 'store-down', name: 'Store unavailable', input: 'The database stops answering', expected: `StoreUnavailableError within ${timeout} before the handler runs; the message is not acknowledged and is delivered again; the handler never runs unprotected.`, verifies: 'Fail closed' },
    { id: 'action-error', name: 'The handler throws', input: 'The handler throws, on every attempt', expected: "The claim is released and the message left unacknowledged, so it is delivered and run again; on the last attempt the record is marked FAILED and the outcome is 'dead' (dead-lettered, acknowledged), and later copies are duplicates.", verifies: 'Transient failures stay retryable, poison messages stop' },
    ...(kinds.crons ? [overlap] : []),
  ];
}

/** The scenarios as the plain idempotent(fn) wrapper answers them: a result or a thrown error, never a status. */
function buildWrapperTests(ctx: Ctx): TestScenario[] {
  const first = ctx.actions[0]!;
  const saga = ctx.sagas[0];
  const label = first.transport ? `The ${TRANSPORT_LABELS[first.transport]} ${transportName(first)}` : first.name;
  const global = first.scope === 'global';
  return [
    { id: 'first-request', name: 'First call', input: `${label} with a new key`, expected: 'The function runs once; its result is stored as JSON, then returned.', verifies: 'Happy path' },
    { id: 'replay', name: 'Same key, same input, again', input: 'The identical call repeated after completion', expected: 'The stored JSON result is returned (detailed() reports replayed: true); the function does not run again.', verifies: 'Core idempotency' },
    { id: 'mismatch', name: 'Same key, different input', input: `The key reused with a different ${first.significantFields[0] ?? 'significant field'}`, expected: 'MismatchError is thrown; it carries nothing of the stored result, and the function does not run.', verifies: 'Fingerprint mismatch detection' },
    { id: 'concurrent', name: 'Concurrent duplicates', input: '50 identical calls with one key at the same moment', expected: 'The function runs exactly once; every other call gets the stored result or throws InFlightError (with retryAfterSeconds); none fails otherwise.', verifies: 'Lock correctness', concurrent: true },
    global
      ? { id: 'other-principal', name: 'Key used by another caller', input: 'A second caller passes a key the first caller already used (global scope: no principal tells them apart)', expected: 'The same input gets the stored result; a different one throws MismatchError; the function does not run again.', verifies: 'Global key space (the key is the only secret)' }
      : { id: 'other-principal', name: 'Key used by another principal', input: 'User B passes a key that user A already used', expected: "B's call runs as B's own new key; A's result is never returned.", verifies: 'Scope isolation' },
    { id: 'expired', name: 'Retry after expiry', input: `The same key after ${ctx.retention.label}`, expected: 'Treated as a new call: the function runs again.', verifies: 'Expiration logic' },
    { id: 'crash', name: 'Crash mid-action, then retry', input: 'The worker is killed after claiming; the caller retries', expected: `InFlightError while the lease (${describeDuration(first.lockTimeoutMs)}) is live; afterwards the retry reclaims, runs once, and the killed worker's late completion throws LeaseLostError.`, verifies: 'Partial failure recovery' },
    saga
      ? { id: 'saga-resume', name: 'Saga step fails, retry', input: `${saga.action}: step 2 (${saga.steps[1]?.name ?? 'second step'}) fails transiently, then the call is retried`, expected: `Resumes at ${saga.steps[1]?.name ?? 'step 2'}; ${saga.steps[0]?.name ?? 'step 1'} is not repeated.`, verifies: 'Multi-step idempotency' }
      : { id: 'saga-resume', name: 'Multi-step retry (no saga here)', input: 'The function fails after its first write, then is retried', expected: 'The claim was released, the retry re-runs the function as a whole, and downstream keys derived from the local key stop any duplicate effect.', verifies: 'Multi-step idempotency' },
    { id: 'store-down', name: 'Store unavailable', input: 'The database stops answering', expected: `StoreUnavailableError within ${describeDuration(ctx.detection.storeTimeoutMs)}; the function never runs unprotected.`, verifies: 'Fail closed' },
    { id: 'action-error', name: 'The function throws', input: 'The wrapped function throws', expected: 'The same error reaches the caller, the claim is released, and the next retry runs the function again.', verifies: 'Transient failures stay retryable' },
  ];
}

/** The real switch, in the user's config: settings.ts carries it to the runtime. */
const LOG_ONLY_SWITCH = '"rollout": "log-only" on the action in idempotency.config.json, then run generate (settings.ts carries it)';

/** What the generated core does in log-only mode (core.ts beginLogOnly), in the words of one trigger. */
const LOG_ONLY_EFFECT = (every: string, instead: string) =>
  `${every}: a key seen for the first time is claimed and recorded (in lease mode; a store failure is only counted in idempotency_store_errors_total), and ${instead} and is counted in idempotency_log_only_total{action,would}. Keys, fingerprints and bodies are never logged.`;

const ENFORCE_DETAIL = (duplicates: string) =>
  `Remove its "rollout" (or set it to "enforce") and run generate: from then on ${duplicates}, records written in log-only mode included.`;

/**
 * What a duplicate of the action costs, as a parenthetical in a table cell (no code spans there): its first clause,
 * without code marks, lower-cased where it starts a sentence (`A duplicate request creates…`).
 */
function riskOf(action: { duplicateImpact: string }): string {
  const clause = action.duplicateImpact.split(/:(?!\d)/)[0]!.replace(/\.$/, '').replace(/`/g, '');
  return /^[A-Z](?:[a-z]|\s)/.test(clause) ? `${clause[0]!.toLowerCase()}${clause.slice(1)}` : clause;
}

export function buildBuildOrder(ctx: Ctx): BuildStep[] {
  const riskiest = [...ctx.actions].sort((a, b) => rank(a) - rank(b))[0]!;
  const hasSaga = ctx.sagas.length > 0;
  const facts = STORE_FACTS[ctx.stack.storeDatabase];
  const steps: Array<Omit<BuildStep, 'step'>> = [
    facts.provision?.(ctx.storage.table) ?? { title: `Create ${ctx.storage.table}${hasSaga ? ` and ${ctx.storage.stepTable}` : ''}`, detail: `Run the migration on ${ctx.stack.databaseLabel}.`, safety: 'Additive DDL; nothing reads the tables yet.' },
    ...(ctx.stack.worker
      ? [
          { title: 'Create the core', detail: 'Construct it once at start-up (createIdempotency); no consumer or job uses it yet.', safety: 'Behaviour unchanged: nothing calls it yet.' },
          { title: `Protect ${riskiest.name} in log-only mode`, detail: `The highest-risk action (${riskOf(riskiest)}) goes first, through ${riskiest.trigger === 'cron' ? 'the cron guard' : 'its broker adapter or idempotentHandler'} (TRIGGERS.md in the scaffold), with ${LOG_ONLY_SWITCH}. ${riskiest.trigger === 'cron' ? LOG_ONLY_EFFECT('Every run does its work', 'a run that enforcement would have skipped (a duplicate or an overlap) does it anyway') : LOG_ONLY_EFFECT('Every delivery runs the handler', 'a delivery that enforcement would have acknowledged as a duplicate or left for redelivery runs it anyway')}`, safety: `Behaviour unchanged: every ${riskiest.trigger === 'cron' ? 'run' : 'delivery'} still does its work. Roll back by ${riskiest.trigger === 'cron' ? 'scheduling the bare job' : 'registering the bare handler'} again.` },
          { title: `Enforce on ${riskiest.name}`, detail: ENFORCE_DETAIL(riskiest.trigger === 'cron' ? 'a slot already run is skipped' : 'a message already handled is acknowledged without running'), safety: `${riskiest.trigger === 'cron' ? 'One job' : 'One consumer'} changes behaviour; roll back by setting "rollout": "log-only" on it again and running generate.` },
          ...(ctx.actions.some((a) => a.trigger === 'consumer')
            ? [{ title: 'Make every message carry a stable id', detail: 'Producers set the id the consumer keys on (a job id, a messageId property, a Nats-Msg-Id or message-id header), the same on every publish of the same work.', safety: 'Watch duplicates_blocked: a consumer that never sees a duplicate may be keyed on something that changes on redelivery.' }]
            : []),
        ]
      : ctx.stack.plain
      ? [
          { title: 'Create the core and the wrappers', detail: 'Construct them once at start-up (createIdempotency); nothing calls them yet.', safety: 'Behaviour unchanged: nothing calls them yet.' },
          { title: `Wrap ${riskiest.name} in log-only mode`, detail: `The highest-risk action (${riskOf(riskiest)}) goes first: ${riskiest.trigger === 'cron' || riskiest.trigger === 'consumer' ? 'through its own entry over the same core (TRIGGERS.md in the scaffold)' : `its body runs inside idempotency.idempotent('${riskiest.name}', call, work)`}, with ${LOG_ONLY_SWITCH}. ${LOG_ONLY_EFFECT('Every call runs the function', 'a call that enforcement would have answered from the store or refused with an error runs it anyway')}`, safety: 'No call is refused or answered from the store; the result comes back in its JSON form, as it will once enforced. Roll back by calling the function directly again.' },
          { title: `Enforce on ${riskiest.name}`, detail: ENFORCE_DETAIL('a repeat gets the stored result'), safety: 'One call path changes behaviour; roll back by setting "rollout": "log-only" on it again and running generate.' },
          { title: 'Turn the wrapper\'s errors into answers', detail: 'Map MismatchError, InFlightError (with its retryAfterSeconds), InvalidKeyError, PrincipalMissingError, NotReplayableError, StoreUnavailableError and OutcomeUnknownError to your API\'s errors; the wrapper answers no HTTP (where your API does, problemForError in plain.ts gives the RFC 9457 problem details the framework adapters answer with, status and retry delay included, for each kind).', safety: 'Watch fingerprint_mismatches for a day: each one is a caller reusing a key.' },
        ]
      : [
          { title: 'Add the middleware in log-only mode', detail: `Mount it on the protected routes with ${LOG_ONLY_SWITCH}. ${LOG_ONLY_EFFECT('Every request runs its handler', 'a request that enforcement would have replayed or refused (missing or malformed key, no principal, a key reused with other parameters, still in flight, store unavailable) runs it anyway')}`, safety: 'No request is refused or answered from the store; each first sighting adds a claim and a record. The metric measures duplicate and bad-key rates before anything is blocked.' },
          { title: `Enforce on ${riskiest.name}`, detail: `The highest-risk action (${riskOf(riskiest)}) goes first. ${ENFORCE_DETAIL('a repeat gets the stored response')}`, safety: 'One route changes behaviour; roll back by setting "rollout": "log-only" on it again and running generate.' },
          { title: 'Check mismatches before enforcing the rest', detail: `Once enforced, a reused key with different parameters gets ${ctx.responses.mismatchStatus}; on the routes still in log-only mode the metric counts them as would="mismatch".`, safety: 'Watch fingerprint_mismatches for a day before enforcing on all clients.' },
        ]),
    { title: 'Enable lease expiry and orphan reclaim', detail: 'Expired claims are reclaimed with a fencing token; heartbeats for long actions.', safety: 'Verify with a kill test in staging.' },
    ctx.cleanup.job
      ? { title: 'Schedule the cleanup job', detail: `${ctx.cleanup.scheduleLabel.charAt(0).toUpperCase()}${ctx.cleanup.scheduleLabel.slice(1)}, ${ctx.cleanup.batchSize} rows per batch.`, safety: 'Deletes only expired, finished rows.' }
      : { title: 'Check the store expires records', detail: facts.expiryCheck ?? ctx.cleanup.strategy, safety: 'Nothing to schedule.' },
    { title: 'Ship metrics and alert rules', detail: 'Dashboards first, then alerts at the thresholds in the monitoring section.', safety: 'Observability only.' },
    { title: 'Extend to the remaining actions', detail: ctx.actions.filter((a) => a !== riskiest).map((a) => a.name).join(', ') || 'No other actions in this design.', safety: 'One action per deploy.' },
  ];
  if (hasSaga) steps.push({ title: 'Add saga step tracking', detail: ctx.sagas.map((s) => `${s.action} (${s.steps.length} steps)`).join(', '), safety: 'Step rows are written alongside the outer claim; resume logic can ship dark.' });
  steps.push({
    title: 'Load-test concurrent duplicates',
    detail: ctx.stack.worker ? 'Publish 50 copies of one message id (and fire one cron slot from several instances) in staging and check exactly one execution.' : 'Fire 50 identical requests per key in staging and check exactly one execution.',
    safety: 'Staging only.',
  });
  return steps.map((step, index) => ({ step: index + 1, ...step }));
}

function rank(action: ActionDesign): number {
  return { financial: 0, external: 1, data: 2, notification: 3 }[action.severity];
}

export function buildRunbook(ctx: Ctx): RunbookEntry[] {
  const facts = STORE_FACTS[ctx.stack.storeDatabase];
  const stuck = facts.stuck(ctx.storage.table, ctx.storage.keyColumn);
  const maintenance = facts.maintenance(ctx.storage.table, ctx.storage.highVolume);
  const entries: RunbookEntry[] = [
    {
      id: 'stuck-processing',
      title: 'Stuck PROCESSING records',
      symptom: `oldest_in_flight_age_seconds above twice the lease, or ${ctx.stack.worker ? "messages coming back 'busy' (or cron runs reporting 'overlap')" : ctx.stack.plain ? 'calls throwing InFlightError' : 'clients receiving 409'} for one key for minutes.`,
      // Said in words rather than as a query: the document shows only code the scaffolding contains, and the words
      // are the store's own (its fields, its way to delete a record on a condition).
      steps: [
        stuck.list,
        'Check whether the owning worker is alive (heartbeat age) and whether the side effect happened (provider dashboard, local tables).',
        stuck.release,
      ],
    },
    {
      id: 'split-brain',
      title: 'Split-brain: the same intent executed twice',
      symptom: 'duplicates_blocked drops to zero while traffic continues, or orphan_reclaims spikes together with provider duplicates.',
      steps: [
        'Compare provider objects carrying the same derived key against local rows; two provider objects for one key means the key was not propagated.',
        'Check that every instance points at the same store (a misrouted read replica accepts no claims and breaks nothing loudly).',
        'Refund or void the duplicate, then fix the propagation before re-enabling the action.',
      ],
    },
    {
      id: 'table-maintenance',
      title: 'Table and partition maintenance',
      symptom: maintenance.symptom,
      steps: maintenance.steps,
    },
  ];
  if (ctx.providers.length > 0) {
    entries.push({
      id: 'provider-divergence',
      title: 'Provider and local state disagree',
      symptom: 'A payment exists at the provider with no COMPLETED local record, or the reverse.',
      steps: [
        `Find the provider object for the local record: ${ctx.providers.map((p) => PROVIDER_LOOKUP[p.id]).join('; ')}.`,
        'If the provider succeeded, complete the local record with the provider result; the client\'s next retry replays it.',
        'If the provider has nothing, release the local record; never create a new provider object with a fresh key.',
      ],
    });
  }
  if (ctx.stack.worker) {
    entries.push({
      id: 'key-flooding',
      title: 'Key growth without more work',
      symptom: 'keys_created grows faster than the messages actually published, or the table grows ahead of traffic.',
      steps: [
        'Find the action from keys_created by action, then its producer: keys come from message ids, so a producer that gives the same work a new id on each publish or retry creates a new key each time, and the work runs again.',
        'Make the producer reuse the id for the same work (a deterministic job id, a messageId property, a Nats-Msg-Id or message-id header), or key the consumer on a business key with messageIdOf.',
        'Delete unfinished records if they crowd the table; completed ones expire with retention.',
      ],
    });
    return entries;
  }
  entries.push({
    id: 'key-flooding',
    title: 'Key-flooding abuse',
    symptom: 'keys_created_per_user above 100 a minute for one principal, table growth ahead of traffic.',
    steps: [
      'Identify the principal from the rate limiter (not from logs of keys).',
      ctx.stack.plain
        ? 'Throttle or block it at the edge or in your API layer, before the wrapper is called; a call refused there writes no record.'
        : 'Throttle or block it with 429 at the edge; 429s are never stored.',
      'Delete its unfinished records if they crowd the table; completed ones expire with retention.',
    ],
  });
  return entries;
}
