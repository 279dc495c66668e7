import type { Job, Processor } from 'bullmq';
import { canonicalJson, sha256Hex } from '../fingerprint.js';
import type { ActionSettings } from '../types.js';
import { idempotentHandler, type HandlerOptions } from './handler.js';

/**
 * Producer side: a deterministic jobId from the business identity of the work, so adding the same job twice
 * while it exists is a no-op in BullMQ itself: `queue.add(name, data, { jobId: jobIdFor(ACTIONS.x, { orderId }) })`.
 * BullMQ forgets ids of removed jobs (removeOnComplete), which is why the worker side dedupes in the store too.
 * No ':' in the id (BullMQ reserves it).
 */
export function jobIdFor(action: ActionSettings, identity: Readonly<Record<string, unknown>>): string {
  return `${action.codeName}-${sha256Hex(canonicalJson(identity)).slice(0, 32)}`;
}

/** Thrown for a job whose key another worker holds right now: BullMQ retries it with the queue's backoff. */
export class JobBusyError extends Error {
  constructor(readonly retryAfterMs: number) {
    super('another worker is processing this job key');
    this.name = 'JobBusyError';
  }
}

/**
 * Worker side: `new Worker(queue, bullmqProcessor({ core, action: ACTIONS.x, handle }), { connection })`.
 * The key is the job id (deterministic when produced with jobIdFor); pass messageIdOf to key on job data instead.
 * A job BullMQ re-runs after a stalled (crashed) worker, or a re-added job, finds the record COMPLETED and returns
 * without running. Give jobs `attempts` > 1 so a busy or failed job is retried; after the last attempt its
 * record is marked FAILED and BullMQ moves it to the failed set (its dead letter).
 */
export function bullmqProcessor<T>(
  options: Omit<HandlerOptions<Job<T>>, 'messageIdOf' | 'attemptOf'> & {
    readonly messageIdOf?: (job: Job<T>) => string;
  },
): Processor<T, { duplicate: boolean }> {
  const handle = idempotentHandler<Job<T>>({
    ...options,
    messageIdOf: options.messageIdOf ?? ((job) => String(job.id)),
    // attemptsMade counts finished failures; this run is the next one.
    attemptOf: (job) => job.attemptsMade + 1,
    // Default: the job's own `attempts` option, so the last BullMQ attempt is the one that marks the record FAILED.
    maxAttempts: options.maxAttempts ?? ((job) => job.opts.attempts ?? 1),
  });
  return async (job) => {
    const outcome = await handle(job);
    if (outcome.kind === 'busy') throw new JobBusyError(outcome.retryAfterMs);
    if (outcome.kind === 'dead')
      throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
    return { duplicate: outcome.kind === 'duplicate' };
  };
}
