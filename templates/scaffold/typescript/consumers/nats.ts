import type { JetStreamClient, JsMsg, PubAck } from 'nats';
import { idempotentHandler, type HandlerOptions } from './handler.js';

/**
 * Publishes with Nats-Msg-Id: JetStream drops a second publish of the same id within the stream's duplicate
 * window (2 minutes by default). Beyond that window, and for redeliveries, the consumer side below deduplicates.
 */
export function publishWithId(
  js: JetStreamClient,
  subject: string,
  data: Uint8Array,
  messageId: string,
): Promise<PubAck> {
  return js.publish(subject, data, { msgID: messageId });
}

/** Nats-Msg-Id when the producer set one (the same id JetStream deduplicated on), else the stream and sequence. */
export function natsMessageId(message: JsMsg): string {
  return message.headers?.get('Nats-Msg-Id') || `${message.info.stream}:${message.seq}`;
}

/**
 * Handles one JetStream message: acks (and waits for the server's confirmation) only after the outcome is
 * recorded; a key another consumer holds is nak'ed with its Retry-After as delay; a failure is nak'ed for
 * redelivery; after maxAttempts deliveries (info.redeliveryCount) the record is marked FAILED and the message is
 * terminated (term(); JetStream then publishes a MAX_DELIVERIES/TERMINATED advisory your dead-letter can follow).
 * A consumer that dies mid-handler never acked: JetStream redelivers after ack_wait, and the store decides.
 */
export function natsHandler(
  options: Omit<HandlerOptions<JsMsg>, 'messageIdOf' | 'attemptOf'> & {
    readonly messageIdOf?: (message: JsMsg) => string;
  },
): (message: JsMsg) => Promise<void> {
  const handle = idempotentHandler<JsMsg>({
    ...options,
    messageIdOf: options.messageIdOf ?? natsMessageId,
    attemptOf: (message) => message.info.redeliveryCount,
  });
  return async (message) => {
    let outcome;
    try {
      outcome = await handle(message);
    } catch {
      message.nak();
      return;
    }
    if (outcome.kind === 'busy') return message.nak(outcome.retryAfterMs);
    if (outcome.kind === 'dead') return message.term();
    await message.ackAck();
  };
}
