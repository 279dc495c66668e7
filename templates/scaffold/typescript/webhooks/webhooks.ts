import type { Decision, IdempotencyCore } from '../core.js';
import { canonicalJson, sha256Hex } from '../fingerprint.js';
import type { ActionSettings, IdempotencyContext } from '../types.js';
import { SignatureError, type WebhookRequest, type WebhookSource } from './verify.js';

export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Records the newest version applied per object; `advance` says whether this event is not older than it. */
export interface OrderingGuard {
  advance(db: unknown, object: string, version: number, eventKey: string): Promise<boolean>;
}

export interface WebhookEvents {
  received?(action: string, provider: string): void;
  rejectedSignature?(action: string, provider: string): void;
  duplicate?(action: string, provider: string): void;
  ignored?(action: string, provider: string, type: string): void;
  stale?(action: string, provider: string): void;
  applied?(action: string, provider: string): void;
  failed?(action: string, provider: string): void;
}

export interface WebhookOptions<E> {
  readonly core: IdempotencyCore;
  readonly action: ActionSettings;
  readonly source: WebhookSource<E>;
  /** Applies one event. In transactional mode write through `context.db` so the effect commits with the record. */
  readonly handle: (event: E, context: IdempotencyContext) => Promise<void>;
  /** Event types you do not handle on purpose: answered 2xx at once, no record kept. Default: handle all. */
  readonly handles?: (type: string) => boolean;
  /**
   * Who the events belong to (the receiving provider account). Default: the provider's name, or 'global' for
   * actions scoped globally. Two connected accounts need their own scope so equal event ids never collide.
   */
  readonly scope?: string;
  /** Opt-in out-of-order protection: events older than the newest applied for their object are acknowledged, not applied. */
  readonly ordering?: OrderingGuard;
  /**
   * How long a concurrent duplicate waits for the first delivery of the same event to finish before answering
   * 409 (the provider resends later). Default: the action's lease.
   */
  readonly duplicateWaitMs?: number;
  readonly events?: WebhookEvents;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const PRINTABLE = /^[\x21-\x7e]{1,200}$/;

/** The record key for an event: readable ("stripe:evt_123") when the id allows, hashed otherwise. */
export function eventKey(provider: string, eventId: string): string {
  const readable = `${provider}:${eventId}`;
  return PRINTABLE.test(readable) ? readable : `${provider.slice(0, 40)}:sha256:${sha256Hex(eventId)}`;
}

function json(status: number, body: unknown, extra: Record<string, string> = {}): WebhookResponse {
  return { status, headers: { 'content-type': 'application/json', ...extra }, body: JSON.stringify(body) };
}

/**
 * Turns a provider's delivery into at most one execution per event: signature first (on the raw body; a bad one
 * is 400 and touches nothing), then per event the same claim / lease / fencing as HTTP, keyed by the provider's
 * event id (never an Idempotency-Key header: providers do not send one). Duplicates, ignored types and stale
 * events get 2xx so the provider stops resending; a failed handler gets 500 so it resends.
 */
export function createWebhookProcessor<E>(
  options: WebhookOptions<E>,
): (request: WebhookRequest) => Promise<WebhookResponse> {
  const { core, action, source } = options;
  const hooks = options.events ?? {};
  const scope = options.scope ?? (action.scope === 'global' ? 'global' : source.provider);
  const waitMs = options.duplicateWaitMs ?? action.leaseMs;
  const accepted = (extra: Record<string, unknown>, headers: Record<string, string> = {}) =>
    source.acceptedBody !== undefined
      ? { status: 200, headers: { 'content-type': 'text/plain', ...headers }, body: source.acceptedBody }
      : json(200, { received: true, ...extra }, headers);

  return async function processWebhook(request) {
    hooks.received?.(action.codeName, source.provider);
    let events: readonly E[];
    try {
      events = await source.verify(request);
    } catch (error) {
      if (!(error instanceof SignatureError)) throw error;
      hooks.rejectedSignature?.(action.codeName, source.provider);
      return json(400, { error: 'invalid-signature' });
    }
    let duplicates = 0;
    let stale = 0;
    for (const event of events) {
      const type = source.eventType(event);
      if (options.handles && !options.handles(type)) {
        hooks.ignored?.(action.codeName, source.provider, type);
        continue;
      }
      const outcome = await processEvent(event, type, request);
      if (outcome.kind === 'answer') return outcome.response;
      if (outcome.kind === 'duplicate') duplicates++;
      if (outcome.kind === 'stale') stale++;
    }
    const all = duplicates > 0 && duplicates === events.length;
    return accepted(
      { ...(all ? { duplicate: true } : {}), ...(stale > 0 ? { stale: true } : {}) },
      all ? { [core.policy.replayHeader]: 'true' } : {},
    );
  };

  async function processEvent(
    event: E,
    type: string,
    request: WebhookRequest,
  ): Promise<{ kind: 'applied' | 'duplicate' | 'stale' } | { kind: 'answer'; response: WebhookResponse }> {
    const key = eventKey(source.provider, source.eventId(event, request));
    // The event's identity is the intent: resends re-sign and re-count attempts, so only id and type are hashed.
    const fingerprint = sha256Hex(canonicalJson({ provider: source.provider, key, type }));
    const deadline = Date.now() + waitMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
      let decision: Decision;
      try {
        decision = await core.begin(action, { scope, key, fingerprint });
      } catch {
        // Store unavailable: fail closed; the provider resends.
        return {
          kind: 'answer',
          response: json(
            503,
            { error: 'store-unavailable' },
            { 'retry-after': String(core.policy.retryAfterSeconds) },
          ),
        };
      }
      if (decision.kind === 'replay' || decision.kind === 'not-replayable') {
        hooks.duplicate?.(action.codeName, source.provider);
        return { kind: 'duplicate' };
      }
      if (decision.kind === 'mismatch')
        return { kind: 'answer', response: json(422, { error: 'event-id-reused-with-another-type' }) };
      if (decision.kind === 'in-flight') {
        // The first delivery is still running: wait for its outcome instead of acknowledging an event that may yet fail.
        if (Date.now() >= deadline)
          return {
            kind: 'answer',
            response: json(
              409,
              { error: 'event-in-progress' },
              { 'retry-after': String(decision.retryAfterSeconds) },
            ),
          };
        await sleep(delay);
        continue;
      }
      const { claim } = decision;
      let stale = false;
      try {
        const ordering = options.ordering ? source.orderingOf?.(event) : undefined;
        if (
          ordering &&
          !(await options.ordering!.advance(claim.context.db, ordering.object, ordering.version, key))
        )
          stale = true;
        else await options.handle(event, claim.context);
      } catch (error) {
        hooks.failed?.(action.codeName, source.provider);
        await claim.release();
        return {
          kind: 'answer',
          response: json(500, {
            error: 'handler-failed',
            message: error instanceof Error ? error.message : String(error),
          }),
        };
      }
      const body = JSON.stringify({ received: true, ...(stale ? { stale: true } : {}) });
      try {
        await claim.complete({
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(body, 'utf8'),
        });
      } catch (error) {
        // Not recorded: a 5xx makes the provider resend; the resend reclaims the key (transactional: everything was rolled back).
        hooks.failed?.(action.codeName, source.provider);
        return {
          kind: 'answer',
          response: json(503, {
            error: 'outcome-not-recorded',
            message: error instanceof Error ? error.message : String(error),
          }),
        };
      }
      if (stale) {
        hooks.stale?.(action.codeName, source.provider);
        return { kind: 'stale' };
      }
      hooks.applied?.(action.codeName, source.provider);
      return { kind: 'applied' };
    }
  }
}
