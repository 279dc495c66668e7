import { houseExpression } from '../houseStyle.js';
import type { ScaffoldView } from '../scaffoldView.js';
import { renderContractTest } from './renderContractTest.js';
import { SAGA_EXPORTS, SAGA_FILE } from './sagaFile.js';
import type { StoreModule } from './types.js';
import { yamlString } from '../yamlString.js';

const newStore = (timeoutMs: string) => `new DynamoIdempotencyStore({ client: pool.client, table: pool.table, timeoutMs: ${timeoutMs} })`;

const CRASH = `  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = ${houseExpression(`new IdempotencyCore(${newStore('POLICY.storeTimeoutMs')}, { ...POLICY, inFlight: 'reject' })`, '    ', '    const core = '.length, 1)};
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    // The lease runs out: what its deadline passing does.
    await pool.client.send(
      new UpdateCommand({
        TableName: pool.table,
        Key: { pk: itemKey(scope, key) },
        UpdateExpression: 'SET leaseUntil = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    const before = executions;
    const retry = await send('crash');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
    await expect(
      dead.complete({ status: 200, headers: {}, body: Buffer.from('late') }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const replay = await send('crash');
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
  });

`;

/** The CloudFormation resource for the table, in the migration slot: what infrastructure code should create. */
function renderTableTemplate(view: ScaffoldView): string {
  const table = yamlString(view.policy.table);
  return `# The idempotency store's DynamoDB table (CloudFormation; the same table as tableDefinition() in table.ts).
# Uniqueness: every claim is a PutItem with ConditionExpression attribute_not_exists(pk) (or over an expired
# record), and every later write is conditional on the fencing token, so one (scope, key) has one owner.
# Records expire after ${view.retentionLabel}: DynamoDB TTL on the \`ttl\` attribute deletes them (lazily; the store
# treats a record past its \`expiresAt\` as gone), so there is no cleanup job.
Resources:
  IdempotencyStoreTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: ${table}
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - AttributeName: pk
          AttributeType: S
      KeySchema:
        - AttributeName: pk
          KeyType: HASH
      TimeToLiveSpecification:
        AttributeName: ttl
        Enabled: true
      PointInTimeRecoverySpecification:
        PointInTimeRecoveryEnabled: true
`;
}

/** DynamoDB through the AWS SDK v3 document client: conditional puts and token-fenced updates, TTL retention. */
export const DYNAMODB_STORE: StoreModule = {
  id: 'dynamodb',
  label: 'DynamoDB',
  serves: ['dynamodb'],
  // No cleanup job: TTL deletes records, and ensureTable() in table.ts is where it is turned on.
  expiryFile: 'table.ts',
  files: [
    { path: 'dynamoStore.ts', template: 'typescript/dynamodb/dynamoStore.ts', role: 'store', purpose: 'DynamoDB store: conditional claim, token-fenced writes, TTL retention' },
    { path: 'pool.ts', template: 'typescript/dynamodb/pool.ts', role: 'store', purpose: 'a DynamoDB document client with bounded waits' },
    { path: 'table.ts', template: 'typescript/dynamodb/table.ts', role: 'store', purpose: 'the table definition (CreateTable) and ensureTable() for development and tests' },
    SAGA_FILE,
  ],
  migration: { path: 'dynamodb-table.yml', purpose: 'the DynamoDB table as a CloudFormation resource, TTL on `ttl`', render: renderTableTemplate },
  transactional: false,
  dependencies: { runtime: ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb'], dev: [] },
  wiring: {
    poolImport: `import type { DynamoPool } from './pool.js';`,
    imports: `import { DynamoIdempotencyStore } from './dynamoStore.js';
import { SagaTracker } from './saga.js';`,
    exports: `export { DynamoIdempotencyStore, recordKey } from './dynamoStore.js';
export { createPool, type DynamoPool, type PoolLimits } from './pool.js';
export { ensureTable, tableDefinition } from './table.js';
${SAGA_EXPORTS}`,
    poolType: 'DynamoPool',
    poolDoc: '  /** The document client and table (createPool from ./pool.js). DynamoDB runs every action in lease mode. */\n',
    build: `  const store = new DynamoIdempotencyStore({
    client: setup.pool.client,
    table: setup.pool.table,
    timeoutMs: POLICY.storeTimeoutMs,
  });`,
    saga: '  const saga = new SagaTracker({ steps: store });',
  },
  readme: {
    migrationStep:
      'Create the table from `dynamodb-table.yml` (CloudFormation; `tableDefinition()` in `table.ts` is the same table for CreateTable, and `ensureTable()` creates it for development). Every action runs in lease mode: DynamoDB has no transaction to share with your own writes. DynamoDB has no server clock a condition can read, so leases are measured by the application servers\' clocks: keep them synchronised (NTP).',
    limits: (view: ScaffoldView) => `- Store down or slow before the action: 503 "not processed" with Retry-After after at most ${view.policy.storeTimeoutMs} ms per request (one
  attempt, no SDK retries). A claim that timed out on the client may still land on the server later; the store then
  releases it (fenced by its token), so a retry is not held off for a lease.`,
    retention: (view: ScaffoldView) => `- Records expire after ${view.retentionLabel}: DynamoDB TTL on the \`ttl\` attribute deletes them (within days; reads treat a record
  past its \`expiresAt\` as gone), so there is no cleanup job. Turn TTL on (the template does).`,
    tests: (command: string) => `\`DYNAMODB_ENDPOINT=http://host:8000 ${command}\` runs the scenarios and the store contract on a throwaway table (DynamoDB Local, dynalite or AWS with credentials in the environment) and deletes it afterwards. Without DYNAMODB_ENDPOINT the suites are skipped with a message.`,
  },
  tests: {
    fsImport: '',
    driverImport: `import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createPool, type DynamoPool } from './pool.js';
import { ensureTable } from './table.js';`,
    storeImport: `import { DynamoIdempotencyStore, recordKey as itemKey } from './dynamoStore.js';`,
    gate: `const DYNAMODB_ENDPOINT = process.env.DYNAMODB_ENDPOINT;
if (!DYNAMODB_ENDPOINT)
  console.warn(
    'idempotency tests skipped: set DYNAMODB_ENDPOINT to a DynamoDB endpoint where they may create a throwaway table',
  );`,
    skipIf: '!DYNAMODB_ENDPOINT',
    declarations: `  const table = \`idem_test_\${randomBytes(6).toString('hex')}\`;
  let pool: DynamoPool;`,
    setup: () => `    pool = { ...createPool(DYNAMODB_ENDPOINT, POLICY), table };
    await ensureTable(pool.client, table);`,
    teardown: `    if (pool) {
      await pool.client.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
      pool.client.destroy();
    }`,
    effectHelpers: `  /** The handler's effect, like a call to another service (DynamoDB runs every action in lease mode): a counter per key. */
  async function recordEffect(context: IdempotencyContext | undefined): Promise<void> {
    if (!context) throw new Error('the handler ran without an idempotency context');
    await pool.client.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: \`effects:\${itemKey(context.scope, context.key)}\` },
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  }

  async function effects(id: string): Promise<number> {
    const { scope, key } = await recordKey(id);
    const { Item } = await pool.client.send(
      new GetCommand({
        TableName: table,
        Key: { pk: \`effects:\${itemKey(scope, key)}\` },
        ConsistentRead: true,
      }),
    );
    return Number(Item?.n ?? 0);
  }`,
    recordKeyHelper: `  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // The same key the middleware computes for this test id (derived keys are hashes of the body fields).
    const body = JSON.parse(JSON.stringify(SAMPLE.body).split('__ID__').join(id)) as unknown;
    const params = routeParams(ACTION.route, SAMPLE.url.split('__ID__').join(id));
    const key = USES_HEADER
      ? \`key-\${id}\`
      : deriveKey(ACTION.codeName, pickFields(ACTION.key.from ?? [], { params, body }));
    return { scope: ACTION.scope === 'global' ? 'global' : 'user-a', key };
  }`,
    assertFinished: `    const { Items } = await pool.client.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    expect((Items ?? []).some((item) => item.status !== undefined && item.status !== 'PROCESSING')).toBe(
      true,
    );`,
    expireRecord: `    await pool.client.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: itemKey(scope, key) },
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': 0 },
      }),
    );`,
    crashTransactional: CRASH,
    crashLease: CRASH,
    newStore,
    newSaga: `new SagaTracker({ steps: ${newStore('POLICY.storeTimeoutMs')} })`,
    assertStillProcessing: `    const record = await new DynamoIdempotencyStore({
      client: pool.client,
      table: pool.table,
      timeoutMs: POLICY.storeTimeoutMs,
    }).read('user-a', key);
    expect(record && { status: record.status, live: record.leaseLive }).toEqual({
      status: 'PROCESSING',
      live: true,
    });`,
  },
  renderContractTest: (view) =>
    renderContractTest(view, {
      imports: `import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoIdempotencyStore } from './dynamoStore.js';
import { createPool } from './pool.js';
import { POLICY } from './settings.js';
import { ensureTable } from './table.js';`,
      gate: `const STORE_NAME = 'DynamoDB store';
const DYNAMODB_ENDPOINT = process.env.DYNAMODB_ENDPOINT;
const RUN = DYNAMODB_ENDPOINT !== undefined;
if (!RUN)
  console.warn(
    'store contract skipped: set DYNAMODB_ENDPOINT to a DynamoDB endpoint where it may create a throwaway table',
  );`,
      // No cleanup hook: DynamoDB TTL deletes records, and reads treat a record past its retention as gone.
      open: `    const table = throwaway();
    const { client } = createPool(DYNAMODB_ENDPOINT, BOUNDS);
    await ensureTable(client, table);
    // Nothing listens on port 1: every call must fail closed within its time-out.
    const dead = createPool('http://127.0.0.1:1', { acquireTimeoutMs: 300, statementTimeoutMs: 300 }).client;
    return {
      store: new DynamoIdempotencyStore({ client, table, timeoutMs: BOUNDS.storeTimeoutMs }),
      unavailable: async () => new DynamoIdempotencyStore({ client: dead, table, timeoutMs: 300 }),
      close: async () => {
        await client.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
        client.destroy();
        dead.destroy();
      },
    };`,
    }),
};
