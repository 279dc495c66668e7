import type { Job } from 'bull';
import { canonicalJson, sha256Hex } from '../fingerprint.js';
import type { ActionSettings } from '../types.js';
import { idempotentHandler, type HandlerOptions } from './handler.js';

/**
 * Legacy Bull (v3/v4, `bull` and `@nestjs/bull`). Producer side: a deterministic jobId from the business identity
 * of the work, so adding the same job twice while it still exists returns the existing job:
 * `queue.add(data, { jobId: jobIdFor(ACTIONS.x, { orderId }), attempts: 5 })`. Bull forgets the ids of removed
 * jobs (removeOnComplete), which is why the worker side dedupes in the store too. The id is never all digits
 * (Bull's own ids are) and has no ':' (Bull builds its Redis keys with it).
 */
export function jobIdFor(action: ActionSettings, identity: Readonly<Record<string, unknown>>): string {
  return `${action.codeName}-${sha256Hex(canonicalJson(identity)).slice(0, 32)}`;
}

/** Thrown for a job whose key another worker holds right now: Bull retries it with the job's backoff. */
export class JobBusyError extends Error {
  constructor(readonly retryAfterMs: number) {
    super('another worker is processing this job key');
    this.name = 'JobBusyError';
  }
}

/**
 * Worker side: `queue.process(name, concurrency, bullProcessor({ core, action: ACTIONS.x, handle }))`, or in NestJS
 * `@Process('name') run(job: Job<T>) { return this.processor(job); }` with the processor built once in the class.
 * The key is the job id (deterministic when produced with jobIdFor); pass messageIdOf to key on job data instead.
 * A job Bull re-runs after a stalled (crashed) worker, or a re-added job, finds the record COMPLETED and returns
 * without running. Give jobs `attempts` > 1 so a busy or failed job is retried; after the last attempt its record
 * is marked FAILED and Bull moves the job to the failed set. Keep `maxStalledCount` above 0 (the default is 1): a
 * stalled job is then re-run and deduped here instead of failing.
 */
export function bullProcessor<T>(
  options: Omit<HandlerOptions<Job<T>>, 'messageIdOf' | 'attemptOf'> & {
    readonly messageIdOf?: (job: Job<T>) => string;
  },
): (job: Job<T>) => Promise<{ duplicate: boolean }> {
  const handle = idempotentHandler<Job<T>>({
    ...options,
    messageIdOf: options.messageIdOf ?? ((job) => String(job.id)),
    // attemptsMade counts finished failures; this run is the next one.
    attemptOf: (job) => job.attemptsMade + 1,
    // Default: the job's own `attempts` option, so the last Bull attempt is the one that marks the record FAILED.
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
