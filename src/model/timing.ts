import type { ActionConfig, Config, Provider, RetrySource, Trigger } from '../config/schema.js';
import { describeDuration, formatDuration, parseDuration } from '../config/duration.js';
import { PROVIDER_LABELS } from './labels.js';
import type { ProviderBudget } from './codeFacts.js';
import { STORE_FACTS, asWrapperFailure, withoutDuplicate } from './storeFacts.js';
import { asWorkerFailure, isWorkerOnly, workerKinds } from './workerOutcomes.js';
import type { DetectionPolicy, RetentionPolicy, StackDesign } from './types.js';

/** Typical duration when the config does not say; stated as an assumption in the document. */
export const DEFAULT_DURATION_MS: Record<Trigger, number> = {
  http: 2_000,
  webhook: 1_000,
  consumer: 5_000,
  cron: 60_000,
};
const PROVIDER_CALL_DURATION_MS = 5_000;

/** Tail latency is typically a small multiple of the median; 3× keeps false orphan detection rare. */
export const LEASE_SAFETY_FACTOR = 3;

/** Beyond this, a crash would block retries for too long: use a short lease renewed by a heartbeat. */
const HEARTBEAT_THRESHOLD_MS = 20_000;
const HEARTBEAT_LEASE_MS = 30_000;

export const SKEW_BUFFER_MS: Record<Config['concurrency'], number> = {
  'single-server': 2_000,
  'multi-instance': 3_000,
  global: 5_000,
};

export function expectedDuration(action: ActionConfig): { ms: number; assumed: boolean } {
  if (action.expectedDurationMs !== undefined) return { ms: action.expectedDurationMs, assumed: false };
  const provider = action.provider !== undefined && action.provider !== 'bank-transfer';
  return { ms: provider ? Math.max(PROVIDER_CALL_DURATION_MS, DEFAULT_DURATION_MS[action.trigger]) : DEFAULT_DURATION_MS[action.trigger], assumed: true };
}

const roundUpToSecond = (ms: number) => Math.ceil(ms / 1_000) * 1_000;

export interface LeaseDecision {
  lockTimeoutMs: number;
  heartbeatMs?: number;
  justification: string;
  /** Set when the calls the code makes can outlast the lease the expected duration alone would give. */
  raisedFor?: WorstCase & { leaseFromDurationMs: number };
}

/** The longest one run may legitimately take because of its provider calls: time-out × attempts, capped by the platform. */
export interface WorstCase {
  /** null: a client without a time-out and no platform limit, so a call may hang indefinitely. */
  ms: number | null;
  /** "Stripe: 80 seconds time-out × 3 attempts (stripe-node default)". */
  text: string;
}

/** One definition for the design and the `lease-shorter-than-worst-case` rule. */
export function worstCaseOf(budgets: readonly ProviderBudget[], cap?: { ms: number; evidence: string }): WorstCase | undefined {
  if (budgets.length === 0) return undefined;
  const parts = budgets.map((b) => `${PROVIDER_LABELS[b.provider as Provider] ?? b.provider}: ${b.timeoutMs === null ? 'no time-out' : `${describeDuration(b.timeoutMs)} time-out`} × ${b.attempts} attempt${b.attempts === 1 ? '' : 's'} (${b.evidence})`);
  // Calls run one after another, so their worst cases add up.
  const unbounded = budgets.some((b) => b.timeoutMs === null);
  const total = unbounded ? null : budgets.reduce((sum, b) => sum + (b.timeoutMs as number) * b.attempts, 0);
  if (cap && (total === null || cap.ms < total)) return { ms: cap.ms, text: `${parts.join('; ')}, capped by ${cap.evidence}` };
  return { ms: total, text: parts.join('; ') };
}

const roundUp = (ms: number) => Math.ceil(ms / 1_000) * 1_000;

/**
 * The lease for one action: from its expected duration, raised to cover the worst case of the calls its code makes
 * (a plain longer lease while that stays short, else a renewed lease that a live worker keeps however long it waits).
 */
export function decideLease(action: ActionConfig, durationMs: number, assumed: boolean, concurrency: Config['concurrency'], worst?: WorstCase): LeaseDecision {
  const base = leaseFromDuration(action, durationMs, assumed, concurrency);
  if (!worst || base.heartbeatMs) return base;
  const skew = SKEW_BUFFER_MS[concurrency];
  if (worst.ms !== null && worst.ms <= base.lockTimeoutMs) return base;
  const raisedFor = { ...worst, leaseFromDurationMs: base.lockTimeoutMs };
  const why = `${assumed ? 'An assumed' : 'The expected'} duration of ${describeDuration(durationMs)} would give a lease of ${describeDuration(base.lockTimeoutMs)}, but the provider calls in the code may legitimately take ${worst.ms === null ? 'without limit' : describeDuration(worst.ms)}: ${worst.text}.`;
  if (worst.ms !== null && worst.ms + skew <= HEARTBEAT_LEASE_MS + skew) {
    const lease = roundUp(worst.ms + skew);
    return {
      lockTimeoutMs: lease,
      raisedFor,
      justification: `${why} The lease is therefore that worst case plus ${describeDuration(skew)} for clock and network skew, rounded up: ${describeDuration(lease)}, so no retry can reclaim the key while a slow but healthy call is still running. Bounding the client's time-out and retries more tightly shortens it.`,
    };
  }
  const lease = HEARTBEAT_LEASE_MS + skew;
  const heartbeat = HEARTBEAT_LEASE_MS / 3;
  return {
    lockTimeoutMs: lease,
    heartbeatMs: heartbeat,
    raisedFor,
    justification: `${why} A lease that long would hold a crashed worker's key just as long, so the lease is a short ${describeDuration(lease)} (${describeDuration(HEARTBEAT_LEASE_MS)} plus ${describeDuration(skew)} for clock and network skew) that the running worker renews every ${describeDuration(heartbeat)} while it waits on the provider: a live worker keeps the key through the whole worst case, a crashed one is detected within ${describeDuration(lease)}. Bounding the client's time-out and retries would make a plain lease enough.`,
  };
}

/** Why the lease is no shorter and no longer, in the terms of who waits for a crashed worker. */
const LONGER_LEASE: Partial<Record<ActionConfig['trigger'], string>> = {
  http: 'Shorter would declare slow but healthy requests orphaned and run them twice; longer would make a client whose worker crashed wait that long before its retry can proceed.',
  consumer: "Shorter would declare slow but healthy handlers orphaned and run them twice; longer would hold a crashed consumer's message that long before a redelivery can run it.",
  cron: "Shorter would declare a slow but healthy run orphaned and run it twice; longer would hold a crashed run's slot that long before a re-fire can run it.",
};

function leaseFromDuration(action: ActionConfig, durationMs: number, assumed: boolean, concurrency: Config['concurrency']): LeaseDecision {
  const skew = SKEW_BUFFER_MS[concurrency];
  const durationText = `${assumed ? 'an assumed' : 'an expected'} duration of ${describeDuration(durationMs)}`;
  const providerNote =
    action.provider && action.provider !== 'bank-transfer'
      ? ` The ${PROVIDER_LABELS[action.provider]} client's request timeout must stay below the lease, so a hung provider call fails before another worker may reclaim the key.`
      : '';
  if (durationMs * LEASE_SAFETY_FACTOR > HEARTBEAT_THRESHOLD_MS) {
    const lease = HEARTBEAT_LEASE_MS + skew;
    const heartbeat = HEARTBEAT_LEASE_MS / 3;
    return {
      lockTimeoutMs: lease,
      heartbeatMs: heartbeat,
      justification:
        `${durationText} times ${LEASE_SAFETY_FACTOR} would hold a crashed worker's claim for ${describeDuration(roundUpToSecond(durationMs * LEASE_SAFETY_FACTOR))}, ` +
        `so the lease is a short ${describeDuration(lease)} (${describeDuration(HEARTBEAT_LEASE_MS)} plus ${describeDuration(skew)} for clock and network skew) ` +
        `that the running worker extends every ${describeDuration(heartbeat)}. A live worker keeps its claim however long it runs; a crashed one is detected within ${describeDuration(lease)}.` +
        providerNote,
    };
  }
  const lease = Math.max(5_000, roundUpToSecond(durationMs * LEASE_SAFETY_FACTOR + skew));
  return {
    lockTimeoutMs: lease,
    justification:
      `${durationText} times ${LEASE_SAFETY_FACTOR} for tail latency, plus ${describeDuration(skew)} for pauses and network delay between the worker and the database, ` +
      `rounded up: ${describeDuration(lease)}. ${LONGER_LEASE[action.trigger] ?? LONGER_LEASE.http}` +
      providerNote,
  };
}

/** How long each provider keeps its own deduplication record, and the floor that puts on local retention. */
export const PROVIDER_WINDOWS: Partial<Record<Provider, { ms: number; text: string }>> = {
  stripe: { ms: 24 * 3_600_000, text: 'Stripe keeps an Idempotency-Key for 24 hours; local keys must live at least as long so both layers recognise the same retry' },
  adyen: { ms: 31 * 86_400_000, text: 'Adyen deduplicates on the merchant reference for about 30 days; 31 days locally covers that window with a day to spare' },
  paypal: { ms: 72 * 3_600_000, text: 'PayPal keeps a PayPal-Request-Id for a period set per API; 72 hours is a conservative floor to confirm against the API reference you call' },
};

const RETRY_SOURCE_WINDOWS: Partial<Record<RetrySource, { ms: number; text: string }>> = {
  'client-retry': { ms: 24 * 3_600_000, text: 'clients (mobile apps in particular) retry after reconnecting, which can be hours later; 24 hours is the usual floor' },
  'webhook-resend': { ms: 72 * 3_600_000, text: 'providers resend unacknowledged webhooks for days (Stripe for up to three days), and a resend must still be recognised' },
  'queue-redelivery': { ms: 24 * 3_600_000, text: 'a message parked in a retry or dead-letter queue can be redelivered or replayed by an operator within a day' },
};

export function decideRetention(config: Config, providersUsed: readonly Provider[], retrySources: readonly RetrySource[]): RetentionPolicy {
  const configuredMs = parseDuration(config.retention)!;
  const floors: RetentionPolicy['floors'] = [];
  for (const provider of providersUsed) {
    const window = PROVIDER_WINDOWS[provider];
    if (window) floors.push({ reason: window.text, ms: window.ms });
  }
  for (const source of retrySources) {
    const window = RETRY_SOURCE_WINDOWS[source];
    if (window) floors.push({ reason: window.text, ms: window.ms });
  }
  const floor = floors.reduce((max, item) => Math.max(max, item.ms), 0);
  const effectiveMs = Math.max(configuredMs, floor);
  const raised = effectiveMs > configuredMs;
  const binding = floors.filter((item) => item.ms === floor);
  let justification = `You asked for ${describeDuration(configuredMs)}.`;
  if (raised) {
    justification += ` That is shorter than the retry windows this design must cover, so retention is raised to ${describeDuration(effectiveMs)}: ${binding.map((item) => item.reason).join('; ')}.`;
  } else if (floors.length > 0) {
    justification += ` It covers every window this design depends on (the longest is ${describeDuration(floor)}: ${binding[0]!.reason}), so it stands.`;
  } else {
    justification += ' No provider or retry source here needs longer, so it stands.';
  }
  justification += isWorkerOnly(config.actions)
    ? ` A message delivered, or a slot fired, after ${describeDuration(effectiveMs)} is treated as new and runs again, so no redelivery or operator replay may come later than that.`
    : ` A retry that arrives after ${describeDuration(effectiveMs)} is treated as a new request, so no caller may retry later than that.`;
  return { configuredMs, effectiveMs, label: formatDuration(effectiveMs), justification, floors, raised };
}

/** Waiting for a pooled connection (including opening one) is bounded on its own. */
export const ACQUIRE_TIMEOUT_MS = 2_000;
/** Lease mode: a completion that fails is retried for this many statement budgets before the outcome is unknown. */
export const COMPLETION_ATTEMPTS = 3;

/**
 * What decides duplicate vs new on this design's store, and how each store call is bounded: the numbers from the
 * target and topology, the words from STORE_FACTS, so they say what the generated store code does.
 */
export function decideDetection(config: Config, stack: Pick<StackDesign, 'storeDatabase' | 'databaseLabel' | 'plain' | 'worker'>): DetectionPolicy {
  const facts = STORE_FACTS[stack.storeDatabase];
  const targetMs = parseDuration(config.detectionLatency)!;
  const expectedMs = config.concurrency === 'global' ? 80 : config.concurrency === 'multi-instance' ? 5 : 2;
  const meets = targetMs >= expectedMs;
  // Statements and connection acquisition are limited separately: a cold pool opening a connection on a loaded host
  // must not eat the statement budget (and answer 503 for a claim that then commits).
  const statementTimeoutMs = Math.min(5_000, Math.max(500, targetMs * 10));
  const acquireTimeoutMs = ACQUIRE_TIMEOUT_MS;
  const storeTimeoutMs = acquireTimeoutMs + statementTimeoutMs;
  const lockTimeoutMs = Math.max(100, Math.round(statementTimeoutMs / 2));
  const completionRetryMs = statementTimeoutMs * COMPLETION_ATTEMPTS;
  const budgets = { acquireTimeoutMs, statementTimeoutMs, lockTimeoutMs, storeTimeoutMs };
  const where =
    config.concurrency === 'global'
      ? 'a cross-region round trip to the primary (typically 50–150 ms)'
      : config.concurrency === 'multi-instance'
        ? 'one round trip inside the region (typically 1–5 ms)'
        : 'one local round trip (typically under 2 ms)';
  let justification = `${facts.roundTrips(where, stack.databaseLabel)} `;
  justification += `The target of ${describeDuration(targetMs)} ${meets ? 'is met' : 'is tighter than the topology allows'}.`;
  if (!meets) {
    justification += ' Keep the idempotency store in the region that serves the request, with keys scoped so that each region owns its own, or relax the target.';
  }
  justification += ` ${facts.bounds(budgets)}`;
  const summary = `${facts.detectionSummary}; target ${describeDuration(targetMs)}, ${facts.detectionTimeouts(budgets)}`;
  return { targetMs, expectedMs, meets, justification, storeTimeoutMs, acquireTimeoutMs, statementTimeoutMs, lockTimeoutMs, completionRetryMs, summary, failures: facts.failures(budgets).map((f) => (stack.worker ? asWorkerFailure(f, workerKinds(config.actions, config.stack.broker)) : stack.plain ? asWrapperFailure(f) : withoutDuplicate(f))) };
}
