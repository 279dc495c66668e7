import type { IdempotencyCore } from '../core.js';
import { canonicalJson, sha256Hex } from '../fingerprint.js';
import type { ActionSettings, IdempotencyContext } from '../types.js';

/**
 * What happened to one delivery. 'done': the effect ran and is recorded (ack). 'duplicate': it had already run,
 * nothing was executed (ack). 'busy': another consumer holds the key right now (do not ack: redeliver later).
 * 'dead': the message had failed maxAttempts times and its record is now FAILED (dead-letter it, then ack).
 * A thrown error means the effect did not complete and the key was released: redeliver.
 */
export type HandleOutcome =
  | { readonly kind: 'done' | 'duplicate' }
  | { readonly kind: 'busy'; readonly retryAfterMs: number }
  | { readonly kind: 'dead'; readonly error: unknown };

export interface ConsumerEvents {
  handled?(action: string, outcome: HandleOutcome['kind'] | 'failed'): void;
}

export interface HandlerOptions<M> {
  readonly core: IdempotencyCore;
  readonly action: ActionSettings;
  /** The message's identity: a producer-set message id or a business key; never a delivery tag or an offset that changes on redelivery. */
  readonly messageIdOf: (message: M) => string;
  /**
   * The effect. In transactional mode write through `context.db`: effect and record commit together. What it resolves
   * to is not kept (a processor that returned a result wrapped as it is): a duplicate has no result to return.
   */
  readonly handle: (message: M, context: IdempotencyContext) => Promise<unknown>;
  /** Key scope; default 'global' (message ids are unique across the queue). */
  readonly scope?: string;
  /** Failures after which a message counts as poison (see `attemptOf`); default 5. */
  readonly maxAttempts?: number | ((message: M) => number);
  /** How many times this message was tried before this delivery (broker counter, header, ...); default from the record. */
  readonly attemptOf?: (message: M) => number | undefined;
  readonly events?: ConsumerEvents;
}

/** Key for a message id: readable when it fits the key grammar, hashed otherwise. */
export function messageKey(action: ActionSettings, messageId: string): string {
  const readable = `${action.codeName}:${messageId}`;
  return /^[\x21-\x7e]{1,200}$/.test(readable)
    ? readable
    : `${action.codeName}:sha256:${sha256Hex(messageId)}`;
}

/**
 * The generic consumer wrapper: `idempotentHandler(options)` returns `(message) => HandleOutcome`. At most one
 * execution per message id, whatever the broker redelivers, as long as the caller acknowledges only after the
 * outcome is 'done', 'duplicate' or 'dead' (every adapter in this folder does).
 */
export function idempotentHandler<M>(options: HandlerOptions<M>): (message: M) => Promise<HandleOutcome> {
  const { core, action } = options;
  const scope = options.scope ?? 'global';
  const maxAttemptsOf = (message: M) =>
    typeof options.maxAttempts === 'function' ? options.maxAttempts(message) : (options.maxAttempts ?? 5);
  const report = (kind: HandleOutcome['kind'] | 'failed') => options.events?.handled?.(action.codeName, kind);

  return async function handleOnce(message) {
    const key = messageKey(action, options.messageIdOf(message));
    // The message id is the intent; the fingerprint pins it to this action so ids reused across actions never replay.
    const fingerprint = sha256Hex(canonicalJson({ action: action.codeName, key }));
    const decision = await core.begin(action, { scope, key, fingerprint });
    if (decision.kind === 'replay' || decision.kind === 'not-replayable' || decision.kind === 'mismatch') {
      report('duplicate');
      return { kind: 'duplicate' };
    }
    if (decision.kind === 'in-flight') {
      report('busy');
      return { kind: 'busy', retryAfterMs: decision.retryAfterSeconds * 1000 };
    }
    const { claim } = decision;
    const attempt = options.attemptOf?.(message) ?? claim.context.attempt;
    try {
      await options.handle(message, claim.context);
    } catch (error) {
      if (attempt >= maxAttemptsOf(message)) {
        // Poison: record the failure so no redelivery runs it again, and let the adapter dead-letter it.
        await claim.release();
        await markFailed(core, action, { scope, key, fingerprint }, error);
        report('dead');
        return { kind: 'dead', error };
      }
      await claim.release();
      report('failed');
      throw error;
    }
    await claim.complete({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"done":true}'),
    });
    report('done');
    return { kind: 'done' };
  };
}

/**
 * Marks a message's record FAILED (status 500 with the error message) so redeliveries of a dead-lettered message
 * are acknowledged without running. Takes the key with a fresh claim: in transactional mode the failed attempt's
 * claim was rolled back with its writes, so only a new claim can record the failure.
 */
export async function markFailed(
  core: IdempotencyCore,
  action: ActionSettings,
  request: { scope: string; key: string; fingerprint: string },
  error: unknown,
): Promise<boolean> {
  const decision = await core.begin(action, request);
  if (decision.kind !== 'execute') return false;
  const body = JSON.stringify({
    failed: true,
    error: error instanceof Error ? error.message : String(error),
  });
  await decision.claim.complete({
    status: 500,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body, 'utf8'),
  });
  return true;
}
