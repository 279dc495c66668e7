import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { newFencingToken } from './keys.js';
import type { StepRecord, StepStore } from './saga.js';
import {
  LeaseLostError,
  StoreUnavailableError,
  type ClaimInput,
  type ClaimRef,
  type ClaimResult,
  type ExistingRecord,
  type IdempotencyStore,
  type RecordStatus,
  type StoredResponse,
} from './types.js';

export interface DynamoStoreOptions {
  /** A DynamoDB document client (createPool from ./pool.js). */
  readonly client: DynamoDBDocumentClient;
  /** The table from dynamodb-table.json: partition key `pk` (string), TTL attribute `ttl`. */
  readonly table: string;
  /** Bound on each store call, on the client (a call still in flight after it is abandoned and fails closed). */
  readonly timeoutMs: number;
  /** The clock leases and retention are measured by; DynamoDB has none to offer in a condition. */
  readonly now?: () => number;
}

/** The item of one (scope, key): a JSON pair, so no separator inside a scope or key can make two keys collide. */
export const recordKey = (scope: string, key: string): string => JSON.stringify([scope, key]);

interface Item {
  readonly pk: string;
  readonly status: RecordStatus;
  readonly token: string;
  readonly action: string;
  readonly fp: string;
  readonly alg: string;
  readonly attempts: number;
  /**
   * Epoch ms the record was created (this process's clock, as for every time here): kept by a takeover. Absent on
   * a record written before it existed; the first takeover sets it.
   */
  readonly createdAt?: number;
  /** Epoch ms until which the owner's lease runs; 0 once released or finished. */
  readonly leaseUntil: number;
  /** Epoch ms after which the record counts as gone (retention), whatever DynamoDB TTL has deleted yet. */
  readonly expiresAt: number;
  readonly released?: boolean;
  readonly completed?: boolean;
  readonly respStatus?: number;
  readonly respHeaders?: string;
  readonly respBody?: Uint8Array;
  readonly respHash?: string;
  /** Saga steps by index, JSON each. */
  readonly steps?: Record<string, string>;
}

/**
 * DynamoDB implementation of the store (AWS SDK v3). Every write is one conditional request: the claim is a put on
 * `attribute_not_exists(pk)` (or over an expired record), a takeover is a compare-and-set on the old fencing token,
 * and complete, extend, release and each saga step are updates conditional on the current token. Lease mode only:
 * DynamoDB has no transaction to share with the action's own writes. Retention is the `ttl` attribute (DynamoDB TTL
 * deletes lazily, so reads treat a record past `expiresAt` as gone), so there is no cleanup job.
 *
 * DynamoDB has no server clock a condition can read: leases and expiry are compared with this process's clock, so
 * keep the application servers' clocks synchronised (NTP) and leases well above their drift.
 */
export class DynamoIdempotencyStore implements IdempotencyStore, StepStore {
  constructor(private readonly options: DynamoStoreOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const token = newFencingToken();
    const ref: ClaimRef = { scope: input.scope, key: input.key, token, action: input.action };
    const now = this.now();
    const leaseUntil = now + Math.max(1, input.leaseMs);
    const expiresAt = now + Math.max(1, input.retentionMs);
    const item: Item = {
      pk: recordKey(input.scope, input.key),
      status: 'PROCESSING',
      token,
      action: input.action,
      fp: input.fingerprint,
      alg: input.algorithm,
      attempts: 1,
      createdAt: now,
      leaseUntil,
      expiresAt,
      steps: {},
    };
    let old: Item | undefined;
    try {
      const put = await this.send(
        'claim',
        new PutCommand({
          TableName: this.options.table,
          Item: { ...item, ttl: ttlOf(Math.max(leaseUntil, expiresAt)) },
          ConditionExpression: 'attribute_not_exists(pk) OR (expiresAt < :now AND leaseUntil < :now)',
          ExpressionAttributeValues: { ':now': now },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return {
        outcome: 'claimed',
        ref,
        reclaimed: put.Attributes ? 'expired' : 'no',
        attempt: 1,
        startedAt: now,
      };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) {
        // The put may still land after this gave up: give the key back, fenced by this token, so a retry is not
        // held off for a lease. The client was told "not processed", which stays true.
        void this.release(ref).catch(() => undefined);
        throw wrap('claim', error);
      }
      old = error.Item
        ? (unmarshallItem(error.Item) as unknown as Item)
        : await this.get('claim', input.scope, input.key);
    }
    if (!old) return this.claim(input);
    const lapsed = old.status === 'PROCESSING' && old.leaseUntil < now;
    if (!lapsed || old.fp !== input.fingerprint || old.alg !== input.algorithm) {
      return { outcome: 'existing', record: toRecord(old, now) };
    }
    // A lapsed lease for the same request: take it over with a new token, if no one else did first.
    try {
      const taken = await this.send(
        'claim',
        new UpdateCommand({
          TableName: this.options.table,
          Key: { pk: item.pk },
          UpdateExpression:
            'SET #token = :token, #action = :action, leaseUntil = :lease, attempts = attempts + :one, #ttl = :ttl, ' +
            'createdAt = if_not_exists(createdAt, :now) REMOVE released',
          ConditionExpression: '#status = :processing AND #token = :old AND leaseUntil < :now',
          ExpressionAttributeNames: {
            '#token': 'token',
            '#action': 'action',
            '#status': 'status',
            '#ttl': 'ttl',
          },
          ExpressionAttributeValues: {
            ':token': token,
            ':action': input.action,
            ':lease': leaseUntil,
            ':one': 1,
            ':ttl': ttlOf(Math.max(leaseUntil, old.expiresAt)),
            ':processing': 'PROCESSING',
            ':old': old.token,
            ':now': now,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const updated = taken.Attributes as Item | undefined;
      const attempt = Number(updated?.attempts ?? old.attempts + 1);
      const startedAt = Number(updated?.createdAt ?? old.createdAt ?? now);
      return { outcome: 'claimed', ref, reclaimed: old.released ? 'released' : 'orphan', attempt, startedAt };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw wrap('claim', error);
      const current = await this.get('claim', input.scope, input.key);
      if (!current) return this.claim(input);
      return { outcome: 'existing', record: toRecord(current, this.now()) };
    }
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const item = await this.get('read', scope, key);
    return item ? toRecord(item, this.now()) : undefined;
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const expiresAt = this.now() + Math.max(1, retentionMs);
    const hashed = response.bodySha256 !== undefined;
    const values: Record<string, unknown> = {
      ':token': ref.token,
      ':status': status,
      ':respStatus': response.status,
      ':headers': JSON.stringify(response.headers),
      ':expires': expiresAt,
      ':ttl': ttlOf(expiresAt),
      ':zero': 0,
      ':yes': true,
      ':processing': 'PROCESSING',
    };
    const set = [
      '#status = :status',
      'respStatus = :respStatus',
      'respHeaders = :headers',
      'completed = :yes',
      'leaseUntil = :zero',
      'expiresAt = :expires',
      '#ttl = :ttl',
    ];
    // DynamoDB keeps no empty binary on every server: an absent body with no hash is the empty body.
    const remove = ['released'];
    if (hashed) {
      set.push('respHash = :hash');
      values[':hash'] = response.bodySha256;
      remove.push('respBody');
    } else if (response.body.length > 0) {
      set.push('respBody = :body');
      values[':body'] = new Uint8Array(response.body);
      remove.push('respHash');
    } else {
      remove.push('respBody', 'respHash');
    }
    return this.fenced(
      'complete',
      new UpdateCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(ref.scope, ref.key) },
        UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
        // Completing twice with the same token is allowed, so a completion whose answer was lost can be retried.
        ConditionExpression: '#token = :token AND (#status = :processing OR completed = :yes)',
        ExpressionAttributeNames: { '#token': 'token', '#status': 'status', '#ttl': 'ttl' },
        ExpressionAttributeValues: values,
      }),
    );
  }

  async release(ref: ClaimRef): Promise<boolean> {
    return this.fenced(
      'release',
      new UpdateCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(ref.scope, ref.key) },
        UpdateExpression: 'SET released = :yes, leaseUntil = :zero',
        ConditionExpression: '#token = :token AND #status = :processing',
        ExpressionAttributeNames: { '#token': 'token', '#status': 'status' },
        ExpressionAttributeValues: {
          ':token': ref.token,
          ':yes': true,
          ':zero': 0,
          ':processing': 'PROCESSING',
        },
      }),
    );
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    const leaseUntil = this.now() + Math.max(1, leaseMs);
    const extended = await this.fenced(
      'extend',
      new UpdateCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(ref.scope, ref.key) },
        UpdateExpression: 'SET leaseUntil = :lease',
        ConditionExpression: '#token = :token AND #status = :processing AND attribute_not_exists(released)',
        ExpressionAttributeNames: { '#token': 'token', '#status': 'status' },
        ExpressionAttributeValues: { ':token': ref.token, ':lease': leaseUntil, ':processing': 'PROCESSING' },
      }),
    );
    if (!extended) return false;
    // TTL must not delete a record whose lease outlives its retention: raise `ttl`, never lower it.
    await this.fenced(
      'extend',
      new UpdateCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(ref.scope, ref.key) },
        UpdateExpression: 'SET #ttl = :ttl',
        ConditionExpression: '#token = :token AND #ttl < :ttl',
        ExpressionAttributeNames: { '#token': 'token', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':token': ref.token, ':ttl': ttlOf(leaseUntil) },
      }),
    );
    return true;
  }

  async loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>> {
    const item = await this.get('saga', claim.scope, claim.key);
    const map = new Map<number, StepRecord>();
    for (const [index, entry] of Object.entries(item?.steps ?? {})) {
      const { status, result } = JSON.parse(entry) as Omit<StepRecord, 'index'>;
      map.set(Number(index), { index: Number(index), status, result });
    }
    return map;
  }

  async recordStep(
    claim: ClaimRef,
    step: { readonly index: number; readonly name: string; readonly subKey: string },
    status: 'DONE' | 'COMPENSATED',
    result: unknown,
  ): Promise<void> {
    const entry = JSON.stringify({ status, result: result ?? null, name: step.name, subKey: step.subKey });
    const recorded = await this.fenced(
      'saga',
      new UpdateCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(claim.scope, claim.key) },
        UpdateExpression: 'SET steps.#index = :entry',
        ConditionExpression: '#token = :token AND #status = :processing',
        ExpressionAttributeNames: { '#index': String(step.index), '#token': 'token', '#status': 'status' },
        ExpressionAttributeValues: { ':entry': entry, ':token': claim.token, ':processing': 'PROCESSING' },
      }),
    );
    if (!recorded) throw new LeaseLostError();
  }

  private async get(operation: string, scope: string, key: string): Promise<Item | undefined> {
    const reply = await this.send(
      operation,
      new GetCommand({
        TableName: this.options.table,
        Key: { pk: recordKey(scope, key) },
        ConsistentRead: true,
      }),
    );
    const item = reply.Item as Item | undefined;
    // Past its retention and no live lease: gone, whether or not TTL has deleted it yet.
    if (!item || (item.expiresAt < this.now() && item.leaseUntil < this.now())) return undefined;
    return item;
  }

  /** An update conditional on the token: false when the condition failed (the token no longer owns the record). */
  private async fenced(operation: string, command: UpdateCommand): Promise<boolean> {
    try {
      await this.send(operation, command);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw wrap(operation, error);
    }
  }

  private async send(
    operation: string,
    command: GetCommand | PutCommand | UpdateCommand,
  ): Promise<{ Attributes?: Record<string, unknown>; Item?: Record<string, unknown> }> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(1, this.options.timeoutMs));
    try {
      // The document client's overloads take one command type at a time; every reply here has one of these shapes.
      const send = this.options.client.send.bind(this.options.client) as (
        command: GetCommand | PutCommand | UpdateCommand,
        options: { abortSignal: AbortSignal },
      ) => Promise<{ Attributes?: Record<string, unknown>; Item?: Record<string, unknown> }>;
      return await send(command, { abortSignal: abort.signal });
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw error;
      throw wrap(operation, error);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** DynamoDB TTL reads whole seconds since the epoch; round up so nothing is deleted early. */
const ttlOf = (ms: number) => Math.ceil(ms / 1000);

function wrap(operation: string, error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof LeaseLostError) return error;
  return new StoreUnavailableError(operation, { cause: error });
}

/** ReturnValuesOnConditionCheckFailure hands back the low-level attribute map. */
function unmarshallItem(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) out[name] = unmarshallValue(value);
  return out;
}

function unmarshallValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value;
  if ('S' in value) return value.S;
  if ('N' in value) return Number(value.N);
  if ('BOOL' in value) return value.BOOL;
  if ('B' in value) return value.B;
  if ('NULL' in value) return null;
  if ('M' in value) return unmarshallItem(value.M as Record<string, unknown>);
  return value;
}

function toRecord(item: Item, now: number): ExistingRecord {
  const finished = item.respStatus !== undefined && item.respStatus !== null;
  const response: StoredResponse | undefined = finished
    ? {
        status: Number(item.respStatus),
        headers: JSON.parse(item.respHeaders || '{}') as Record<string, string>,
        body: item.respBody ? Buffer.from(item.respBody) : Buffer.alloc(0),
      }
    : undefined;
  const remaining = item.status === 'PROCESSING' ? item.leaseUntil - now : 0;
  return {
    status: item.status,
    fingerprint: item.fp,
    algorithm: item.alg,
    leaseLive: item.status === 'PROCESSING' && remaining > 0,
    leaseRemainingMs: Math.max(0, remaining),
    response,
    notReplayable: finished && item.respHash !== undefined,
  };
}
