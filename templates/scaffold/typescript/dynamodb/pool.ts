import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What createIdempotency() takes as `pool`: the client and the store's table. */
export interface DynamoPool {
  readonly client: DynamoDBDocumentClient;
  readonly table: string;
}

export interface PoolLimits {
  /** The store's table (POLICY.table); default idempotency_store. */
  readonly table?: string;
  /** Longest wait for a connection to DynamoDB to open. */
  readonly acquireTimeoutMs: number;
  /** Longest wait for one request's answer: the store aborts a call after its own time-out (POLICY.storeTimeoutMs). */
  readonly statementTimeoutMs: number;
}

/**
 * A DynamoDB document client for the store (pass POLICY). Named createPool like the other stores' helpers. `endpoint`
 * is for DynamoDB Local or a compatible server ('' or undefined: AWS, region and credentials from the environment).
 * One attempt per call: the store fails closed with 503 rather than retrying past the request's budget.
 */
export function createPool(endpoint: string | undefined, limits: PoolLimits | number): DynamoPool {
  const { acquireTimeoutMs, table } =
    typeof limits === 'number' ? { acquireTimeoutMs: limits, table: undefined } : limits;
  // DynamoDB Local and dynalite on this machine take any credentials and region; AWS takes them from the environment.
  const local =
    endpoint !== undefined && /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:|\/|$)/.test(endpoint);
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    ...(local && !process.env.AWS_REGION && !process.env.AWS_DEFAULT_REGION ? { region: 'us-east-1' } : {}),
    maxAttempts: 1,
    requestHandler: { connectionTimeout: acquireTimeoutMs },
  });
  return {
    client: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
    table: table ?? 'idempotency_store',
  };
}
