import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { idempotentHandler, type HandlerOptions } from './handler.js';

export interface SqsConsumerOptions extends Omit<HandlerOptions<Message>, 'messageIdOf' | 'attemptOf'> {
  readonly queueUrl: string;
  /** Where poison messages go after maxAttempts (their record is FAILED first), with the error as an attribute. */
  readonly deadLetterQueueUrl: string;
  /**
   * Default: the SQS MessageId, the same on every redelivery of one send. A producer that retries SendMessage gets a
   * new MessageId: pass a business key reader then (or publish with sendWithId and read its attribute).
   */
  readonly messageIdOf?: (message: Message) => string;
  /** Messages per ReceiveMessage (1 to 10); default 10. */
  readonly batchSize?: number;
  /** Long-poll wait per ReceiveMessage in seconds (0 to 20); default 20. */
  readonly waitTimeSeconds?: number;
  /** Ends the loop: the receive under way is aborted, messages being handled are settled first. */
  readonly signal?: AbortSignal;
}

/** The message attribute sendWithId sets and messageIdOfAttribute reads: a stable id per intent. */
export const MESSAGE_ID_ATTRIBUTE = 'idempotency-message-id';

/** Sends with a stable id of the producer's choosing, so a retried SendMessage is the same message to the consumer. */
export async function sendWithId(
  client: Pick<SQSClient, 'send'>,
  queueUrl: string,
  body: string,
  messageId: string,
): Promise<void> {
  await client.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageAttributes: { [MESSAGE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: messageId } },
    }),
  );
}

/** The id sendWithId set: pass as `messageIdOf` when producers use it. */
export function messageIdOfAttribute(message: Message): string {
  const id = message.MessageAttributes?.[MESSAGE_ID_ATTRIBUTE]?.StringValue;
  if (!id)
    throw new Error(`message ${message.MessageId ?? '?'} without the ${MESSAGE_ID_ATTRIBUTE} attribute`);
  return id;
}

function sqsMessageId(message: Message): string {
  if (!message.MessageId) throw new Error('message without MessageId');
  return message.MessageId;
}

/**
 * Settles one received message by its outcome: 'done' and 'duplicate' delete it; a message another consumer holds
 * is made visible again after its Retry-After; after maxAttempts (counted by SQS's ApproximateReceiveCount) the
 * record is marked FAILED and the message is sent to the dead-letter queue, then deleted. A thrown handler leaves
 * the message alone: SQS delivers it again when its visibility timeout lapses. A consumer that dies mid-handler
 * deleted nothing either, and the store decides on the redelivery.
 */
export function sqsHandler(
  client: Pick<SQSClient, 'send'>,
  options: SqsConsumerOptions,
): (message: Message) => Promise<void> {
  const handle = idempotentHandler<Message>({
    ...options,
    messageIdOf: options.messageIdOf ?? sqsMessageId,
    attemptOf: (message) => Number(message.Attributes?.ApproximateReceiveCount ?? 1) || 1,
  });
  const remove = (message: Message) =>
    client.send(
      new DeleteMessageCommand({ QueueUrl: options.queueUrl, ReceiptHandle: message.ReceiptHandle }),
    );
  return async (message) => {
    let outcome;
    try {
      outcome = await handle(message);
    } catch {
      // Not completed, key released: the visibility timeout brings it back with its receive count raised.
      return;
    }
    if (outcome.kind === 'busy') {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: options.queueUrl,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: Math.min(Math.ceil(outcome.retryAfterMs / 1000), 43_200),
        }),
      );
      return;
    }
    if (outcome.kind === 'dead') {
      await client.send(
        new SendMessageCommand({
          QueueUrl: options.deadLetterQueueUrl,
          MessageBody: message.Body ?? '',
          MessageAttributes: {
            ...message.MessageAttributes,
            'idempotency-error': { DataType: 'String', StringValue: errorText(outcome.error) },
          },
        }),
      );
    }
    await remove(message);
  };
}

/**
 * The receive loop: long-polls the queue and settles each message through sqsHandler until `signal` aborts.
 * A receive loop of your own calls sqsHandler's function for each message it receives instead.
 */
export async function pollIdempotently(
  client: Pick<SQSClient, 'send'>,
  options: SqsConsumerOptions,
): Promise<void> {
  const settle = sqsHandler(client, options);
  while (!options.signal?.aborted) {
    let messages: Message[];
    try {
      const received = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: options.batchSize ?? 10,
          WaitTimeSeconds: options.waitTimeSeconds ?? 20,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: options.signal },
      );
      messages = received.Messages ?? [];
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
    await Promise.all(messages.map(settle));
  }
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
