import { describe, expect, it } from 'vitest';
import { IdempotencyCore, refusedRequest, type IdempotentRequest } from '../../templates/scaffold/typescript/core/core.js';
import { identifyRequest } from '../../templates/scaffold/typescript/core/identify.js';
import { createMemoryStore } from '../../templates/scaffold/typescript/core/memoryStore.js';
import type { ActionSettings, IdempotencyPolicy, IdempotencyStore, LogOnlyOutcome } from '../../templates/scaffold/typescript/core/types.js';

/**
 * The log-only rollout in the generated core, on the in-memory store: every request gets 'execute', first sightings
 * are recorded for real (so 'enforce' later replays them), everything else is counted under the answer enforcement
 * would have given, and no store failure ever reaches the caller.
 */
const POLICY: IdempotencyPolicy = {
  keyHeader: 'Idempotency-Key',
  maxKeyLength: 255,
  keyPattern: '^[\\x21-\\x2b\\x2d-\\x7e]{1,255}$',
  mismatchStatus: 422,
  inFlight: 'wait',
  inFlightWaitMs: 60_000,
  retryAfterSeconds: 2,
  replayHeader: 'Idempotent-Replayed',
  replayedHeaders: ['content-type'],
  problemTypeBase: 'https://example.com/problems/',
  retentionMs: 3_600_000,
  acquireTimeoutMs: 500,
  statementTimeoutMs: 500,
  lockTimeoutMs: 250,
  storeTimeoutMs: 1_000,
  completionRetryMs: 60_000,
  maxStoredResponseBytes: 16,
  fingerprintAlgorithm: 'sha256-canonical-json-v1',
  table: 'idempotency_store',
  stepTable: 'idempotency_steps',
  cleanupBatchSize: 1000,
};

const action = (rollout?: 'enforce' | 'log-only', mode: 'lease' | 'transactional' = 'lease'): ActionSettings => ({
  name: 'placeOrder',
  codeName: 'placeOrder',
  trigger: 'http',
  method: 'POST',
  route: '/orders',
  significantFields: ['sku'],
  scope: 'user',
  mode,
  key: { source: 'client' },
  leaseMs: 30_000,
  steps: [],
  ...(rollout ? { rollout } : {}),
});

const request = (key: string, fingerprint = 'a'.repeat(64)): IdempotentRequest => ({ scope: 'usr_a', key, fingerprint });
const answer = (text: string) => ({ status: 201, headers: { 'content-type': 'text/plain' }, body: Buffer.from(text) });

function setup(store: IdempotencyStore = createMemoryStore()) {
  const counted: Array<[string, LogOnlyOutcome]> = [];
  const storeErrors: string[] = [];
  const replayed: string[] = [];
  const core = new IdempotencyCore(store, POLICY, {
    logOnly: (name, would) => counted.push([name, would]),
    storeError: (operation) => storeErrors.push(operation),
    replayed: (name) => replayed.push(name),
  });
  return { core, store, counted, storeErrors, replayed };
}

describe('log-only rollout in the core', () => {
  it('records a first sighting for real, runs duplicates under a pass-through claim, and enforcement later replays the record', async () => {
    const { core, counted, replayed } = setup();
    const logOnly = action('log-only');
    const first = await core.begin(logOnly, request('k1'));
    if (first.kind !== 'execute') throw new Error(first.kind);
    expect(first.claim.context.token).not.toBe('');

    // In flight: enforcement would answer 409; log-only runs it with a claim that records nothing.
    const inFlight = await core.begin(logOnly, request('k1'));
    if (inFlight.kind !== 'execute') throw new Error(inFlight.kind);
    expect(inFlight.claim.context).toMatchObject({ scope: 'usr_a', key: 'k1', token: '', db: undefined });
    await inFlight.claim.complete(answer('second'));

    await first.claim.complete(answer('first'));
    const again = await core.begin(logOnly, request('k1'));
    expect(again.kind).toBe('execute');
    const mismatch = await core.begin(logOnly, request('k1', 'b'.repeat(64)));
    if (mismatch.kind !== 'execute') throw new Error(mismatch.kind);
    // Another intent under a reused key: provider keys derived from k1 would be refused for other parameters.
    expect(mismatch.claim.context.key).not.toBe('k1');
    expect(again.kind === 'execute' && again.claim.context.key).toBe('k1');
    expect(counted).toEqual([
      ['placeOrder', 'in-flight'],
      ['placeOrder', 'replay'],
      ['placeOrder', 'mismatch'],
    ]);
    // Would-be replays are not counted as replays: none happened.
    expect(replayed).toEqual([]);

    const enforced = await core.begin(action(), request('k1'));
    expect(enforced.kind).toBe('replay');
    if (enforced.kind === 'replay') expect(enforced.response.body.toString()).toBe('first');
  });

  it('a response above the cap: the duplicate runs and is counted not-replayable', async () => {
    const { core, counted } = setup();
    const first = await core.begin(action('log-only'), request('big'));
    if (first.kind !== 'execute') throw new Error(first.kind);
    await first.claim.complete(answer('x'.repeat(100)));
    expect((await core.begin(action('log-only'), request('big'))).kind).toBe('execute');
    expect(counted).toEqual([['placeOrder', 'not-replayable']]);
  });

  it('claims in lease mode even for a transactional action, so our store never rolls back the handler writes', async () => {
    const memory = createMemoryStore();
    let transactions = 0;
    const store: IdempotencyStore = Object.assign(Object.create(memory) as IdempotencyStore, {
      claimInTransaction: () => {
        transactions++;
        return Promise.reject(new Error('log-only must not open a claim transaction'));
      },
    });
    const { core } = setup(store);
    const decision = await core.begin(action('log-only', 'transactional'), request('tx'));
    if (decision.kind !== 'execute') throw new Error(decision.kind);
    expect(decision.claim.context.db).toBeUndefined();
    await decision.claim.complete(answer('done'));
    expect(transactions).toBe(0);
    expect((await memory.read('usr_a', 'tx'))?.status).toBe('COMPLETED');
  });

  it('a store that fails to claim or to complete never turns into an error: counted, and the handler runs', async () => {
    const memory = createMemoryStore();
    let failComplete = false;
    const store: IdempotencyStore = Object.assign(Object.create(memory) as IdempotencyStore, {
      complete: (...args: Parameters<IdempotencyStore['complete']>) =>
        failComplete ? Promise.reject(new Error('connection reset')) : memory.complete(...args),
    });
    const { core, counted, storeErrors } = setup(store);
    const claimed = await core.begin(action('log-only'), request('flaky'));
    if (claimed.kind !== 'execute') throw new Error(claimed.kind);
    failComplete = true;
    // One attempt, no retries for completionRetryMs (60 s here): the answer is not held back for the store.
    await expect(claimed.claim.complete(answer('sent anyway'))).resolves.toBeUndefined();
    await expect(claimed.claim.release()).resolves.toBeUndefined();
    expect(storeErrors).toEqual(['complete']);

    memory.close();
    const down = await core.begin(action('log-only'), request('down'));
    expect(down.kind).toBe('execute');
    if (down.kind === 'execute') await expect(down.claim.complete(answer('ok'))).resolves.toBeUndefined();
    expect(counted).toEqual([['placeOrder', 'store-unavailable']]);
    expect(storeErrors).toEqual(['complete', 'claim']);
    // Enforcing, the same outage fails closed.
    await expect(core.begin(action(), request('down'))).rejects.toThrow('idempotency store unavailable');
  });

  it('runOnce runs the work for every duplicate and returns its own result', async () => {
    const { core, counted } = setup();
    let runs = 0;
    const work = async () => ++runs;
    expect(await core.runOnce(action('log-only'), request('job'), work)).toEqual({ result: 1, replayed: false });
    expect(await core.runOnce(action('log-only'), request('job'), work)).toEqual({ result: 2, replayed: false });
    expect(await core.runOnce(action(), request('job'), work)).toEqual({ result: 1, replayed: true });
    expect(counted).toEqual([['placeOrder', 'replay']]);
  });

  it('identifyRequest lets a request without a usable key or principal through as a refused request, counted as refuse', async () => {
    const { core, counted, store } = setup();
    const parts = (keyHeader: string | undefined, principal: string | undefined) => ({
      method: 'POST',
      keyHeader,
      params: {},
      body: { sku: 'SKU-1' },
      query: {},
      principal: () => principal,
    });
    expect(identifyRequest(action(), POLICY, parts(undefined, 'usr_a')).kind).toBe('refuse');
    expect(identifyRequest(action(), POLICY, parts('k', undefined)).kind).toBe('refuse');
    for (const [header, principal] of [[undefined, 'usr_a'], ['has space', 'usr_a'], ['k', undefined]] as const) {
      const identified = identifyRequest(action('log-only'), POLICY, parts(header, principal));
      if (identified.kind !== 'check') throw new Error(identified.kind);
      expect(identified.request.refused).toBe(true);
      const decision = await core.begin(action('log-only'), identified.request);
      if (decision.kind !== 'execute') throw new Error(decision.kind);
      expect(decision.claim.context.key).toMatch(/^[0-9a-f]{32}$/);
      await decision.claim.complete(answer('ran'));
      expect(await store.read(identified.request.scope, identified.request.key)).toBeUndefined();
    }
    expect(counted).toEqual([
      ['placeOrder', 'refuse'],
      ['placeOrder', 'refuse'],
      ['placeOrder', 'refuse'],
    ]);
    // Another method still passes through untouched, uncounted.
    expect(identifyRequest(action('log-only'), POLICY, { ...parts(undefined, 'usr_a'), method: 'GET' }).kind).toBe('pass');
    expect(refusedRequest('').scope).toBe('anonymous');
  });
});

describe('log-only contexts', () => {
  it('the core marks its contexts: claimed for a first sighting, pass-through for a duplicate, nothing when enforcing', async () => {
    const { core } = setup();
    const first = await core.begin(action('log-only'), request('ctx'));
    const second = await core.begin(action('log-only'), request('ctx'));
    const enforced = await core.begin(action(), request('other'));
    if (first.kind !== 'execute' || second.kind !== 'execute' || enforced.kind !== 'execute') throw new Error('expected executes');
    expect([first.claim.context.logOnly, second.claim.context.logOnly, 'logOnly' in enforced.claim.context]).toEqual(['claimed', 'pass-through', false]);
  });
});
