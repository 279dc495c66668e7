import type { Config } from '../../config/schema.js';
import type { ActionDesign, AntiPattern, StackDesign } from '../types.js';
import { STORE_FACTS } from '../storeFacts.js';

interface Candidate {
  id: string;
  pattern: string;
  whyItFails: string;
  /** Why it matters for this design, or undefined when it does not apply. */
  here: (input: AntiPatternInput) => string | undefined;
}

export interface AntiPatternInput {
  config: Config;
  stack: StackDesign;
  actions: readonly ActionDesign[];
  highVolume: boolean;
}

const CANDIDATES: Candidate[] = [
  {
    id: 'ui-only',
    pattern: 'Disabling the submit button as the only guard',
    whyItFails: 'Network retries, API clients, proxies and races never touch the button.',
    here: ({ config, actions }) =>
      actions.some((a) => a.trigger === 'http') && (config.retrySources.includes('double-click') || config.retrySources.length === 0)
        ? `Double submits are a retry source for ${names(actions.filter((a) => a.trigger === 'http'))}; the server-side claim is the guard, the disabled button only a courtesy.`
        : undefined,
  },
  {
    id: 'check-then-insert',
    pattern: 'Checking application state without a database constraint',
    whyItFails: 'Two requests both read "not there yet" and both insert.',
    here: ({ stack }) =>
      stack.framework === 'nestjs'
        ? `A NestJS guard or interceptor that does findOne() then save() through the ORM races exactly like this; the claim must be ${STORE_FACTS[stack.storeDatabase].claimShort}.`
        : stack.storeKind === 'relational'
          ? `An ORM "find, then create" on ${stack.databaseLabel} races; the claim is ${STORE_FACTS[stack.storeDatabase].claimShort}, and the constraint makes the second insert impossible.`
          : `On ${stack.databaseLabel} the claim must be a single conditional write; a read followed by a write races.`,
  },
  {
    id: 'timestamp-keys',
    pattern: 'Using timestamps as idempotency keys',
    whyItFails: 'Requests in the same millisecond collide, and a retry a second later gets a new key and runs again.',
    here: ({ actions }) => {
      const cron = actions.filter((a) => a.trigger === 'cron');
      return cron.length > 0
        ? `${names(cron)} must key on the scheduled slot (the run's logical date), never on the time the run actually started.`
        : undefined;
    },
  },
  {
    id: 'no-cleanup',
    pattern: 'Keeping keys forever',
    whyItFails: 'The table grows without bound and the primary-key index slows every claim.',
    here: ({ config, stack }) =>
      STORE_FACTS[stack.storeDatabase].selfCleaning
        ? `Records expire after the retention window: ${stack.databaseLabel} deletes each one itself, so there is no cleanup job (retention here: ${config.retention} requested).`
        : `Records expire after the retention window; the cleanup job deletes them in batches (retention here: ${config.retention} requested).`,
  },
  {
    id: 'trust-provider',
    pattern: 'Trusting the payment provider to prevent local duplicates',
    whyItFails: 'Provider deduplication stops a second charge, not a second order row, e-mail or shipment.',
    here: ({ actions }) => {
      const paying = actions.filter((a) => a.provider && a.provider !== 'bank-transfer');
      return paying.length > 0 ? `${names(paying)} call a provider; its key protects the charge, the local claim protects everything else.` : undefined;
    },
  },
  {
    id: 'body-equality',
    pattern: 'Comparing raw request bodies instead of a stable key',
    whyItFails: 'Bodies differ in fields that do not change the intent (timestamps, trace ids), and equal bodies can be two genuine intents.',
    here: ({ actions, stack }) =>
      stack.worker
        ? 'No body is compared: a consumer is keyed and fingerprinted by its message id, a cron job by its slot, so a redelivered message with a new timestamp in its payload is still the same work.'
        : `Fingerprints hash only the listed significant fields (${actions.length} action${actions.length === 1 ? '' : 's'}); the key decides identity.`,
  },
  {
    id: 'lock-no-timeout',
    pattern: 'Locking without a timeout',
    whyItFails: 'A crashed process holds its lock forever and every retry is refused.',
    here: ({ actions }) => `Every claim has a lease (${actions.map((a) => `${a.name}: ${Math.round(a.lockTimeoutMs / 1000)} s`).join(', ')}); an expired lease is reclaimed with a fencing token.`,
  },
  {
    id: 'app-clock',
    pattern: 'Comparing lease times with the application clock',
    whyItFails: 'Skew between instances makes one node reclaim a lease another node still holds.',
    here: ({ config, stack }) =>
      config.concurrency === 'single-server'
        ? undefined
        : `With ${config.concurrency === 'global' ? 'instances in several regions' : 'several instances'}, ${STORE_FACTS[stack.storeDatabase].leaseClock}`,
  },
  {
    id: 'plain-bodies',
    pattern: 'Storing full response bodies without encryption',
    whyItFails: 'The store becomes a copy of personal and payment data, outside the controls of the main tables.',
    here: ({ actions, stack }) =>
      actions.some((a) => a.severity === 'financial')
        ? `${stack.plain ? 'Payment results (the JSON the wrapped function returns) are stored for every repeat' : 'Payment responses are stored for replay'}; the store sits under the same encryption-at-rest and access rules as the payments tables.`
        : undefined,
  },
  {
    id: 'no-partitioning',
    pattern: 'Not partitioning a high-volume store',
    whyItFails: 'Above roughly a million keys a day, row-by-row deletes bloat the table and slow claims.',
    here: ({ highVolume }) =>
      highVolume
        ? 'Expected volume passes the threshold, but the cure here is not time partitions (they would weaken the primary key to include created_at and let a retry across a boundary run twice): autovacuum tuning, frequent small cleanup batches, and hash partitions on (scope, key) if it ever comes to that.'
        : undefined,
  },
  {
    id: 'ack-before-complete',
    pattern: 'Acknowledging a message before its effect is recorded',
    whyItFails: 'A crash after the ack loses the message; a crash before the effect is recorded and after the ack cannot be retried.',
    here: ({ actions, stack }) =>
      actions.some((a) => a.trigger === 'consumer')
        ? `Consumers on ${stack.brokerLabel} acknowledge only after the record is COMPLETED, so redelivery is the recovery path.`
        : undefined,
  },
  {
    id: 'webhook-200-first',
    pattern: 'Answering a webhook 200 before the event is durably recorded',
    whyItFails: 'The provider stops resending, and a crash loses the event for good.',
    here: ({ actions }) => {
      const hooks = actions.filter((a) => a.trigger === 'webhook');
      return hooks.length > 0 ? `${names(hooks)} answer 2xx only after the event key is COMPLETED.` : undefined;
    },
  },
];

function names(actions: readonly ActionDesign[]): string {
  return actions.map((a) => a.name).join(', ');
}

export function selectAntiPatterns(input: AntiPatternInput): AntiPattern[] {
  const out: AntiPattern[] = [];
  for (const candidate of CANDIDATES) {
    const here = candidate.here(input);
    if (here !== undefined) out.push({ id: candidate.id, pattern: candidate.pattern, whyItFails: candidate.whyItFails, here });
  }
  return out;
}
