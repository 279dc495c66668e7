import type { Consumer, EachMessagePayload, KafkaMessage } from 'kafkajs';
import { idempotentHandler, type HandlerOptions } from './handler.js';

/** A business key from a header (e.g. 'message-id') or the record key; topic/partition/offset as the last resort. */
export function kafkaMessageId(
  payload: Pick<EachMessagePayload, 'topic' | 'partition' | 'message'>,
  header = 'message-id',
): string {
  const value = payload.message.headers?.[header];
  const fromHeader = Array.isArray(value) ? value[0] : value;
  if (fromHeader !== undefined) return fromHeader.toString();
  // The offset identifies this record, not its content: a producer retry that wrote it twice gets two offsets.
  // Prefer a producer-set id (header) or an idempotent producer when duplicates at the source matter.
  return `${payload.topic}/${payload.partition}/${payload.message.offset}`;
}

/**
 * An eachMessage handler for a consumer run with `autoCommit: false`: the offset is committed only after the
 * record is COMPLETED (or was already), so a crash before the commit means redelivery, and the store turns the
 * redelivery into a no-op. A busy or failed message throws: kafkajs restarts from the last committed offset.
 */
export function kafkaEachMessage(
  consumer: Pick<Consumer, 'commitOffsets'>,
  options: Omit<HandlerOptions<EachMessagePayload>, 'messageIdOf'> & {
    readonly messageIdOf?: (payload: EachMessagePayload) => string;
  },
): (payload: EachMessagePayload) => Promise<void> {
  const handle = idempotentHandler<EachMessagePayload>({
    ...options,
    messageIdOf: options.messageIdOf ?? ((payload) => kafkaMessageId(payload)),
  });
  return async (payload) => {
    const outcome = await handle(payload);
    if (outcome.kind === 'busy') throw new Error(`message key busy; retry after ${outcome.retryAfterMs} ms`);
    // 'dead': the record is FAILED; committing moves past the poison message (route it to a dead-letter topic in handle's catch if you need it).
    await consumer.commitOffsets([
      { topic: payload.topic, partition: payload.partition, offset: nextOffset(payload.message) },
    ]);
  };
}

/**
 * The offset after this one, in decimal digits: offsets are 64-bit, beyond a Number, and a BigInt literal does not
 * compile for targets before ES2020 (a worker with target es2017 is common).
 */
function nextOffset(message: KafkaMessage): string {
  const digits = message.offset.split('');
  let index = digits.length - 1;
  while (index >= 0 && digits[index] === '9') digits[index--] = '0';
  return index < 0
    ? `1${digits.join('')}`
    : `${digits.slice(0, index).join('')}${Number(digits[index]) + 1}${digits.slice(index + 1).join('')}`;
}
