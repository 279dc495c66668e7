import { createHash } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { newFencingToken } from './keys.js';
import type { RedisClient } from './pool.js';
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

export interface RedisStoreOptions {
  readonly client: RedisClient | Cluster;
  /** Key prefix, e.g. POLICY.table; every record lives under `<prefix>:{<scope>:<key>}`. */
  readonly prefix: string;
  /** Bound on each store command, on the client (a command still queued after it is not waited for). */
  readonly timeoutMs: number;
}

// KEYS: 1 record hash, 2 lease (string, holds the token, expires by PX on the server clock), 3 saga steps hash.
// A lease is live while its key exists, so no timestamps from application servers are ever compared.
// 'created' is the record's creation time (epoch ms, the server's TIME): a reclaim keeps it; an expired record is
// gone (TTL), so its key starts over with a new one.
const CLAIM = `
local status = redis.call('HGET', KEYS[1], 'status')
local lease = tonumber(ARGV[5])
local function now_ms()
  local t = redis.call('TIME')
  return string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
if not status then
  local created = now_ms()
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'status', 'PROCESSING', 'token', ARGV[1], 'action', ARGV[2], 'fp', ARGV[3],
    'alg', ARGV[4], 'attempts', 1, 'created', created)
  redis.call('PEXPIRE', KEYS[1], math.max(lease, tonumber(ARGV[6])))
  redis.call('SET', KEYS[2], ARGV[1], 'PX', lease)
  return {'claimed', 'no', 1, created}
end
local r = redis.call('HMGET', KEYS[1], 'fp', 'alg', 'released', 'resp_status', 'resp_headers', 'resp_body', 'resp_hash')
if status == 'PROCESSING' and redis.call('EXISTS', KEYS[2]) == 0 and r[1] == ARGV[3] and r[2] == ARGV[4] then
  local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'action', ARGV[2])
  -- A record written before 'created' existed gets one now, kept from here on.
  redis.call('HSETNX', KEYS[1], 'created', now_ms())
  local created = redis.call('HGET', KEYS[1], 'created')
  redis.call('HDEL', KEYS[1], 'released')
  redis.call('SET', KEYS[2], ARGV[1], 'PX', lease)
  if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
  if r[3] then return {'claimed', 'released', attempts, created} end
  return {'claimed', 'orphan', attempts, created}
end
return {'existing', status, r[1], r[2], redis.call('PTTL', KEYS[2]), r[4], r[5], r[6], r[7]}
`;

const READ = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return false end
local r = redis.call('HMGET', KEYS[1], 'fp', 'alg', 'resp_status', 'resp_headers', 'resp_body', 'resp_hash')
return {'existing', status, r[1], r[2], redis.call('PTTL', KEYS[2]), r[3], r[4], r[5], r[6]}
`;

// Every write after the claim is fenced by the token. Completing twice with the same token is allowed, so a
// completion whose answer was lost can be retried safely.
const COMPLETE = `
local cur = redis.call('HMGET', KEYS[1], 'token', 'status', 'completed')
if cur[1] ~= ARGV[1] or (cur[2] ~= 'PROCESSING' and not cur[3]) then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'resp_status', ARGV[3], 'resp_headers', ARGV[4], 'completed', '1')
if ARGV[6] == '' then
  redis.call('HSET', KEYS[1], 'resp_body', ARGV[5])
  redis.call('HDEL', KEYS[1], 'resp_hash', 'released')
else
  redis.call('HSET', KEYS[1], 'resp_hash', ARGV[6])
  redis.call('HDEL', KEYS[1], 'resp_body', 'released')
end
redis.call('DEL', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[7]) end
return 1
`;

const RELEASE = `
local cur = redis.call('HMGET', KEYS[1], 'token', 'status')
if cur[1] ~= ARGV[1] or cur[2] ~= 'PROCESSING' then return 0 end
redis.call('HSET', KEYS[1], 'released', '1')
redis.call('DEL', KEYS[2])
return 1
`;

const EXTEND = `
local cur = redis.call('HMGET', KEYS[1], 'token', 'status', 'released')
if cur[1] ~= ARGV[1] or cur[2] ~= 'PROCESSING' or cur[3] then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

const RECORD_STEP = `
local cur = redis.call('HMGET', KEYS[1], 'token', 'status')
if cur[1] ~= ARGV[1] or cur[2] ~= 'PROCESSING' then return 0 end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
return 1
`;

interface Script {
  readonly text: string;
  readonly sha: string;
}
const script = (text: string): Script => ({ text, sha: createHash('sha1').update(text).digest('hex') });
const SCRIPTS = {
  claim: script(CLAIM),
  read: script(READ),
  complete: script(COMPLETE),
  release: script(RELEASE),
  extend: script(EXTEND),
  recordStep: script(RECORD_STEP),
};

/** `{` `}` `:` `%` are escaped so the hash tag is exactly `{scope:key}`, whatever the key contains. */
const escapeTag = (value: string) =>
  value.replace(/[{}:%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/** The record, lease and saga-steps keys of (scope, key): all in one cluster slot through the hash tag. */
export function recordKeys(prefix: string, scope: string, key: string): [string, string, string] {
  const record = `${prefix}:{${escapeTag(scope)}:${escapeTag(key)}}`;
  return [record, `${record}:lease`, `${record}:steps`];
}

/**
 * Redis implementation of the store (ioredis; Redis 6.2+ or Redis Cluster). Each operation is one Lua script, so
 * it is atomic on the server; every key of a record carries the hash tag {scope:key} and lands in one cluster slot.
 * Lease mode only: Redis has no transaction to share with the action's own writes. Retention is the record's TTL,
 * so there is no cleanup job.
 */
export class RedisIdempotencyStore implements IdempotencyStore, StepStore {
  constructor(private readonly options: RedisStoreOptions) {}

  private keys(scope: string, key: string): [string, string, string] {
    return recordKeys(this.options.prefix, scope, key);
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const token = newFencingToken();
    const ref: ClaimRef = { scope: input.scope, key: input.key, token, action: input.action };
    const args = [
      token,
      input.action,
      input.fingerprint,
      input.algorithm,
      lease(input.leaseMs),
      lease(input.retentionMs),
    ];
    let reply: unknown;
    try {
      reply = await this.run('claim', SCRIPTS.claim, this.keys(input.scope, input.key), args);
    } catch (error) {
      // The script may still run after this gave up (it was queued or in flight): give the key back, fenced by
      // this token, so a retry is not held off for a lease. The client was told "not processed", which stays true.
      void this.release(ref).catch(() => undefined);
      throw error;
    }
    const parts = reply as unknown[];
    if (text(parts[0]) === 'claimed') {
      const reclaimed = text(parts[1]) as 'no' | 'orphan' | 'released';
      return {
        outcome: 'claimed',
        ref,
        reclaimed,
        attempt: Number(parts[2]),
        startedAt: Number(text(parts[3])),
      };
    }
    return { outcome: 'existing', record: toRecord(parts) };
  }

  async read(scope: string, key: string): Promise<ExistingRecord | undefined> {
    const reply = await this.run('read', SCRIPTS.read, this.keys(scope, key), []);
    return Array.isArray(reply) ? toRecord(reply) : undefined;
  }

  async complete(
    ref: ClaimRef,
    status: 'COMPLETED' | 'FAILED',
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const stored = response.bodySha256 === undefined;
    const args = [
      ref.token,
      status,
      String(response.status),
      JSON.stringify(response.headers),
      stored ? response.body : Buffer.alloc(0),
      response.bodySha256 ?? '',
      lease(retentionMs),
    ];
    return (await this.run('complete', SCRIPTS.complete, this.keys(ref.scope, ref.key), args)) === 1;
  }

  async release(ref: ClaimRef): Promise<boolean> {
    return (await this.run('release', SCRIPTS.release, this.keys(ref.scope, ref.key), [ref.token])) === 1;
  }

  async extend(ref: ClaimRef, leaseMs: number): Promise<boolean> {
    const args = [ref.token, lease(leaseMs)];
    return (await this.run('extend', SCRIPTS.extend, this.keys(ref.scope, ref.key), args)) === 1;
  }

  async loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>> {
    const [, , steps] = this.keys(claim.scope, claim.key);
    const reply = (await this.bounded('saga', this.options.client.callBuffer('HGETALL', steps))) as Buffer[];
    const map = new Map<number, StepRecord>();
    for (let i = 0; i + 1 < reply.length; i += 2) {
      const index = Number(text(reply[i]));
      const { status, result } = JSON.parse(text(reply[i + 1])) as Omit<StepRecord, 'index'>;
      map.set(index, { index, status, result });
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
    const args = [claim.token, String(step.index), entry];
    const recorded = await this.run('saga', SCRIPTS.recordStep, this.keys(claim.scope, claim.key), args);
    if (recorded !== 1) throw new LeaseLostError();
  }

  /** EVALSHA, loading the script with EVAL the first time a server has not seen it. */
  private async run(operation: string, code: Script, keys: string[], args: Array<string | Buffer | number>) {
    const { client } = this.options;
    try {
      return await this.bounded(
        operation,
        client.callBuffer('EVALSHA', code.sha, keys.length, ...keys, ...args),
      );
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw wrap(operation, error);
    }
    try {
      return await this.bounded(
        operation,
        client.callBuffer('EVAL', code.text, keys.length, ...keys, ...args),
      );
    } catch (error) {
      throw wrap(operation, error);
    }
  }

  private async bounded<T>(operation: string, work: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => setImmediate(() => reject(new StoreUnavailableError(operation))),
        Math.max(1, this.options.timeoutMs),
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}

const lease = (ms: number) => String(Math.max(1, Math.round(ms)));

function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value ?? '');
}

function wrap(operation: string, error: unknown): Error {
  if (error instanceof StoreUnavailableError || error instanceof LeaseLostError) return error;
  return new StoreUnavailableError(operation, { cause: error });
}

/** ['existing', status, fp, alg, lease pttl, resp_status, resp_headers, resp_body, resp_hash] */
function toRecord(parts: unknown[]): ExistingRecord {
  const [, status, fp, alg, pttl, respStatus, headers, body, hash] = parts;
  const finished = respStatus !== null && respStatus !== undefined;
  const response: StoredResponse | undefined = finished
    ? {
        status: Number(text(respStatus)),
        headers: JSON.parse(text(headers) || '{}') as Record<string, string>,
        body: Buffer.isBuffer(body) ? body : Buffer.alloc(0),
      }
    : undefined;
  const remaining = Number(pttl);
  return {
    status: text(status) as RecordStatus,
    fingerprint: text(fp),
    algorithm: text(alg),
    leaseLive: text(status) === 'PROCESSING' && remaining > 0,
    leaseRemainingMs: Math.max(0, remaining),
    response,
    notReplayable: finished && (body === null || body === undefined) && hash !== null && hash !== undefined,
  };
}
