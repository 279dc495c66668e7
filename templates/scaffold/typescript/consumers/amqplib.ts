import type { ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { idempotentHandler, type HandlerOptions } from './handler.js';

/** Header carrying how many times this message has been tried; set by the redelivery below. */
export const ATTEMPT_HEADER = 'x-idempotency-attempt';

export interface AmqpConsumerOptions extends Omit<
  HandlerOptions<ConsumeMessage>,
  'messageIdOf' | 'attemptOf'
> {
  readonly queue: string;
  /** Where poison messages go after maxAttempts (their record is FAILED first). */
  readonly deadLetterExchange: string;
  readonly deadLetterRoutingKey?: string;
  /** Default: properties.messageId (set it on publish); pass a business key reader otherwise. */
  readonly messageIdOf?: (message: ConsumeMessage) => string;
  /** Unacknowledged messages per consumer; default 10. */
  readonly prefetch?: number;
}

/** Publishes with a message id, persistent, and waits for the broker's confirm. */
export async function publishWithId(
  channel: ConfirmChannel,
  queue: string,
  body: Buffer,
  messageId: string,
  options: Options.Publish = {},
): Promise<void> {
  channel.sendToQueue(queue, body, { persistent: true, ...options, messageId });
  await channel.waitForConfirms();
}

function messageIdFrom(message: ConsumeMessage): string {
  const id = message.properties.messageId as unknown;
  if (typeof id !== 'string' || id === '')
    throw new Error('message without messageId: publish with publishWithId or pass messageIdOf');
  return id;
}

/**
 * consume() with acknowledgement only after the outcome is recorded: 'done' and 'duplicate' are acked; a message
 * another consumer holds is nacked back after its Retry-After; a failure is republished with its attempt count
 * (confirmed before the original is acked, so nothing is lost and a double copy is deduplicated), and after
 * maxAttempts the record is marked FAILED and the message goes to the dead-letter exchange, then acked.
 * A consumer that dies mid-handler never acked: RabbitMQ redelivers, and the store decides.
 */
export async function consumeIdempotently(
  channel: ConfirmChannel,
  options: AmqpConsumerOptions,
): Promise<{ consumerTag: string }> {
  const attemptOf = (message: ConsumeMessage) =>
    Number(message.properties.headers?.[ATTEMPT_HEADER] ?? 1) || 1;
  const handle = idempotentHandler<ConsumeMessage>({
    ...options,
    messageIdOf: options.messageIdOf ?? messageIdFrom,
    attemptOf,
  });
  await channel.prefetch(options.prefetch ?? 10);
  const onMessage = async (message: ConsumeMessage) => {
    try {
      const outcome = await handle(message);
      if (outcome.kind === 'busy') {
        const timer = setTimeout(
          () => channel.nack(message, false, true),
          Math.min(outcome.retryAfterMs, 30_000),
        );
        timer.unref();
        return;
      }
      if (outcome.kind === 'dead') {
        channel.publish(
          options.deadLetterExchange,
          options.deadLetterRoutingKey ?? options.queue,
          message.content,
          {
            ...message.properties,
            headers: { ...message.properties.headers, 'x-idempotency-error': errorText(outcome.error) },
          },
        );
        await channel.waitForConfirms();
      }
      channel.ack(message);
    } catch (error) {
      // Not completed, key released: try again later as a new copy with the attempt counted.
      try {
        channel.sendToQueue(options.queue, message.content, {
          ...message.properties,
          headers: {
            ...message.properties.headers,
            [ATTEMPT_HEADER]: attemptOf(message) + 1,
            'x-idempotency-error': errorText(error),
          },
        });
        await channel.waitForConfirms();
        channel.ack(message);
      } catch {
        channel.nack(message, false, true);
      }
    }
  };
  return channel.consume(options.queue, (message) => {
    if (message) void onMessage(message);
  });
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
