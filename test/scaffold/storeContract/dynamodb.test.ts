import { afterAll } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';
import { startDynalite, throwaway } from './services.js';

// dynalite (an npm dev dependency) serves the DynamoDB API in this process, so this suite never skips.
const server = await startDynalite();
const scaffold = await materializeStore('dynamodb');
afterAll(async () => {
  await scaffold.remove();
  await server.close();
});
const { DynamoIdempotencyStore } = await scaffold.load('dynamoStore');
const { createPool } = await scaffold.load('pool');
const { ensureTable } = await scaffold.load('table');
// No cleanup hook: DynamoDB TTL deletes records, and reads treat a record past its retention as gone.
await runStoreContract(scaffold, 'DynamoDB (dynalite)', async () => {
  const table = throwaway('contract');
  const { client } = createPool(server.endpoint, { acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 });
  await ensureTable(client, table);
  const down = createPool('http://127.0.0.1:1', { acquireTimeoutMs: 300, statementTimeoutMs: 300 }).client;
  return {
    store: new DynamoIdempotencyStore({ client, table, timeoutMs: 5_000 }),
    unavailable: async () => new DynamoIdempotencyStore({ client: down, table, timeoutMs: 300 }),
    close: async () => {
      client.destroy();
      down.destroy();
    },
  };
});
