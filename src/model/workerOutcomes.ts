import type { ResponsePolicy } from './types.js';
import { BROKER_LABELS } from './labels.js';
import type { StoreFailure } from './storeFacts.js';

/**
 * The design of a worker: every action a queue consumer or a cron job. Those never answer HTTP: a consumer goes through
 * idempotentHandler (consumers/handler.ts), whose outcome decides whether the message is acknowledged, and a job through
 * CronGuard (cron/guard.ts), whose outcome says what happened to its slot. These are the texts that say so, in place of
 * statuses, headers and bodies.
 */
export interface WorkerKinds {
  consumers: boolean;
  crons: boolean;
  /** The brokers the consumers are delivered by (each action's own where inspection found it, else the stack's). */
  brokers: readonly string[];
}

/** Every action a consumer or a cron job (none reached as GraphQL, tRPC or a Server Action): a worker design. */
export function isWorkerOnly(actions: ReadonlyArray<{ trigger: string; transport?: unknown }>): boolean {
  return actions.length > 0 && actions.every((a) => a.transport === undefined && (a.trigger === 'consumer' || a.trigger === 'cron'));
}

/**
 * The broker a consumer action is delivered by: its own where inspection found it, else the stack's. The document
 * (workerKinds) and the scaffold (the adapters in consumers/, planTriggers) both ask this, so they name the same ones.
 */
export function deliveringBroker(action: { broker?: string | undefined }, stackBroker: string): string {
  return action.broker ?? stackBroker;
}

export function workerKinds(actions: ReadonlyArray<{ trigger: string; broker?: string | undefined }>, stackBroker: string): WorkerKinds {
  const consumers = actions.filter((a) => a.trigger === 'consumer');
  const brokers = [...new Set(consumers.map((a) => deliveringBroker(a, stackBroker)))].filter((b) => b !== 'none' && b !== 'unknown').sort();
  return { consumers: consumers.length > 0, crons: actions.some((a) => a.trigger === 'cron'), brokers };
}

/** What each broker adapter in consumers/ does with a busy delivery and with a dead one (handler.ts outcomes). */
const ADAPTERS: Record<string, { busy: string; dead: string }> = {
  bullmq: { busy: 'the processor throws JobBusyError and BullMQ retries the job with its backoff', dead: 'the job fails for the last time and BullMQ moves it to the failed set' },
  bull: { busy: 'the processor throws JobBusyError and Bull retries the job with its backoff', dead: 'the job fails for the last time and Bull moves it to the failed set' },
  rabbitmq: { busy: 'the message is nacked back to the queue after the time left on the lease (at most 30 seconds)', dead: 'the message is published to the dead-letter exchange, then acked' },
  nats: { busy: "the message is nak'ed with the time left on the lease as the delay", dead: 'the message is terminated (term()), which JetStream reports in an advisory a dead-letter can follow' },
  kafka: { busy: 'eachMessage throws and kafkajs resumes from the last committed offset', dead: 'the offset is committed past it; no dead-letter topic unless the handler routes one' },
  sqs: { busy: 'the message is made visible again after the time left on the lease (ChangeMessageVisibility)', dead: 'the message is sent to the dead-letter queue, then deleted' },
};

/** " (BullMQ: …; RabbitMQ: …)" for the design's brokers that have an adapter; brokers without one act on the outcome themselves. */
function inBrokerTerms(kinds: WorkerKinds, what: 'busy' | 'dead'): string {
  const parts = kinds.brokers.map((b) => (ADAPTERS[b] ? `${BROKER_LABELS[b] ?? b}: ${ADAPTERS[b][what]}` : `${BROKER_LABELS[b] ?? b}: no adapter in the scaffold, so the consumer that calls idempotentHandler acts on the outcome`));
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

/** "consumer: …; cron job: …" with only the parts this design has. */
function both(kinds: WorkerKinds, consumer: string, cron: string): string {
  if (kinds.consumers && kinds.crons) return `Consumer: ${consumer} Cron job: ${cron}`;
  return kinds.consumers ? consumer : cron;
}

/** The response rules as idempotentHandler and CronGuard behave: outcomes and acknowledgements, never a status. */
export function workerRules(kinds: WorkerKinds, transactional: boolean): ResponsePolicy['rules'] {
  const rules: ResponsePolicy['rules'] = [
    {
      situation: 'New message id or slot',
      response: both(kinds, "claim the key, run the handler, record it COMPLETED, outcome 'done': the adapter acknowledges the message.", "claim the slot, run the job, record it COMPLETED, outcome 'ran'."),
      stored: 'Yes, before the acknowledgement',
    },
    {
      situation: 'Same message id or slot, completed',
      response: both(kinds, "outcome 'duplicate': the handler does not run and the message is acknowledged.", "outcome 'duplicate': the job does not run for that slot again."),
      stored: 'Already',
    },
    {
      situation: 'Same message id, different content',
      response: both(
        kinds,
        "treated as a duplicate (acknowledged, not run): the fingerprint is derived from the action and the message id, not from the payload, so the id alone decides. A producer must give each distinct message its own id.",
        "cannot happen: the fingerprint is derived from the job name and the slot, which are the key.",
      ),
      stored: 'No',
    },
    {
      situation: 'Same message id or slot, still running',
      response: both(
        kinds,
        `outcome 'busy' with the time left on the lease: the message is not acknowledged${inBrokerTerms(kinds, 'busy')}, and when it comes back the store decides once more.`,
        "outcome 'overlap': this run does nothing and leaves the slot to the run that holds it.",
      ),
      stored: 'No',
    },
    { situation: 'Lease expired (worker crashed)', response: 'The next delivery or fire of the same key reclaims it with a new fencing token and runs; the crashed run\'s late writes are rejected', stored: 'When it completes' },
    {
      situation: 'Key from an id that does not fit the key grammar',
      response: both(
        kinds,
        'never rejected: the key is the action name and the message id, hashed (action:sha256:…) when together they are longer than 200 characters or hold a space or anything outside printable ASCII. A message whose id cannot be read (messageIdOf throws) counts as a failed delivery.',
        'never rejected: the key is the job name and the slot\'s ISO time, hashed when it does not fit.',
      ),
      stored: 'No',
    },
    {
      situation: 'The handler or job throws',
      response: both(
        kinds,
        'the claim is released and the error rethrown: the message is not acknowledged, so it is delivered again and runs again.',
        'the claim is released and the error rethrown: the run fails, and the next fire of the same slot runs it again.',
      ),
      stored: 'No',
    },
    ...(kinds.consumers
      ? [
          {
            situation: 'A message that keeps failing (poison)',
            response: `On the attempt that reaches maxAttempts (default 5; the BullMQ and Bull adapters use the job's own attempts) the record is marked FAILED with the error message and the outcome is 'dead': the message is taken off the queue${inBrokerTerms(kinds, 'dead')}; any later copy is a duplicate and does not run.`,
            stored: 'Yes, FAILED with the error',
          },
        ]
      : []),
    {
      situation: 'Store unavailable or slow before the work',
      response: both(
        kinds,
        'the claim throws StoreUnavailableError before the handler runs (fail closed): the message is not acknowledged and is delivered again once the store answers.',
        'the claim throws StoreUnavailableError before the job runs: the run fails and the slot stays unclaimed for a later fire.',
      ),
      stored: 'No',
    },
    ...(transactional
      ? [{ situation: 'Completion cannot be recorded (transactional mode)', response: 'The claim and the handler\'s writes roll back together and StoreUnavailableError propagates: nothing is acknowledged, and the next delivery or fire runs cleanly', stored: 'No' }]
      : []),
    {
      situation: 'Completion cannot be recorded (lease mode)',
      response: 'Retried with the same fencing token, then OutcomeUnknownError propagates: nothing is acknowledged. The record stays PROCESSING, so copies delivered meanwhile are busy (or overlap); once the lease lapses the next one runs the work again with the same provider keys',
      stored: 'Not yet',
    },
    { situation: 'Expired key', response: 'Treated as new: a copy delivered after the retention window runs again', stored: 'Yes, fresh record' },
  ];
  return rules;
}

/** What the key section says instead of 400s: the key is read from the message or the slot, never from a header. */
export function workerValidation(kinds: WorkerKinds): string[] {
  return [
    ...(kinds.consumers
      ? [
          "A consumer's key is its message id (messageIdOf, by default the id the broker adapter reads) joined to the action name; there is no header and nothing to reject. An id that does not fit (with the action name longer than 200 characters, or holding a space or anything outside printable ASCII) is hashed to action:sha256:… instead.",
          'A message whose id cannot be read (a RabbitMQ message published without messageId) makes messageIdOf throw: the delivery fails like any thrown error and is delivered again, so publish with an id or pass messageIdOf.',
        ]
      : []),
    ...(kinds.crons ? ["A cron job's key is cron:{job}:{slot start as ISO time}, hashed when it does not fit: the slot a fire belongs to, never the time it started."] : []),
  ];
}

/** Contested keys, for consumers and jobs: a busy message or an overlapping run, never a 409. */
export function workerContested(kinds: WorkerKinds): string {
  return both(
    kinds,
    `A copy of a message whose key another consumer holds gets outcome 'busy' at once, carrying the time left on the lease; it is not acknowledged${inBrokerTerms(kinds, 'busy')}, and when it comes back the store decides again. Waiting inside the handler would hold a delivery slot for work another consumer is already doing.`,
    "A fire whose slot another run holds gets outcome 'overlap' and returns at once without running: each (job, slot) runs at most once across every instance.",
  );
}

/** A store failure row as a consumer or job meets it: StoreUnavailableError, no acknowledgement, no status. */
export function asWorkerFailure(failure: StoreFailure, kinds: WorkerKinds): StoreFailure {
  const { duplicate, ...row } = failure;
  const effect = both(
    kinds,
    'StoreUnavailableError ("not processed") before the handler runs; the message is not acknowledged and is delivered again.',
    'StoreUnavailableError before the job runs; the run fails and the slot stays unclaimed.',
  );
  return { ...row, answer: `${effect}${duplicate ? ` For ${duplicate}: outcome 'busy' (a consumer) or 'overlap' (a job).` : ''}` };
}
