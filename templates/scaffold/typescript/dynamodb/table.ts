import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The store's table, as CreateTable takes it (dynamodb-table.yml is the same table for CloudFormation): one string
 * partition key `pk` (the JSON pair [scope, key]); every other attribute is written by the store.
 */
export function tableDefinition(table: string): CreateTableCommandInput {
  return {
    TableName: table,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/**
 * Creates the table if it is missing, waits until it is ACTIVE and turns on TTL for the `ttl` attribute. For
 * development and tests; production tables belong to your infrastructure code (dynamodb-table.yml).
 */
export async function ensureTable(client: DynamoDBDocumentClient, table: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(table)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      }),
    );
  } catch (error) {
    // Already on, or a local server without TTL: reads treat records past their retention as gone either way.
    const { name, message } = error as Error;
    if (!/already enabled|UnknownOperation|not supported/i.test(`${name} ${message}`)) throw error;
  }
}
