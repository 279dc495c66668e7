import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter, AppProcess } from './appProcess.js';
import { FaultWorld, type Answer } from './faultWorld.js';
import { STORE_LABELS, storeSkipReason, type StoreKind } from './stores.js';
import type { ProfileCase } from '../scaffold/profileCases.js';

/** Runs `work` over `items` with at most `limit` in flight, keeping results in input order. */
export async function withConcurrency<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Deterministic shuffle (mulberry32), so a failing order can be replayed. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

export const isProblem = (answer: Answer) => (answer.headers.get('content-type') ?? '').includes('application/problem+json');
export const retryAfter = (answer: Answer) => Number(answer.headers.get('retry-after'));
export const replayed = (answer: Answer) => answer.headers.get('idempotent-replayed') === 'true';

/** A 5xx whose problem says the outcome is unknown (CONTRACT §5), and never that the request was not processed. */
function expectOutcomeUnknown(answer: Answer): void {
  expect(answer.status, answer.body).toBeGreaterThanOrEqual(500);
  expect(isProblem(answer)).toBe(true);
  const problem = JSON.parse(answer.body) as { type?: string; title?: string; detail?: string };
  expect(`${problem.type} ${problem.title}`, answer.body).toMatch(/unknown/i);
  expect(problem.detail ?? '', answer.body).not.toMatch(/not (been )?processed/i);
}

/** A world with two app processes of one adapter on one database, shared by the scenarios of one describe block. */
export function useWorld(adapter: Adapter, store: StoreKind = 'postgres', profile?: ProfileCase): { world: () => FaultWorld; apps: () => [AppProcess, AppProcess] } {
  let world: FaultWorld | undefined;
  beforeAll(async () => {
    world = await FaultWorld.create(adapter, store, profile);
    await Promise.all([world.startApp(), world.startApp()]);
  }, 180_000);
  afterAll(async () => {
    await world?.dispose();
  });
  return {
    world: () => world!,
    apps: () => [world!.apps[0]!, world!.apps[1]!],
  };
}

/**
 * The fault scenarios by stable id, so a suite can run a subset (faultProfiles.test.ts); `network` ones fault the
 * network between app and store, which an embedded store does not have.
 */
export const SCENARIOS = {
  hammer: { network: false },
  sigkill: { network: false },
  'lease-lapse': { network: false },
  'two-principals': { network: false },
  'claim-cut': { network: true },
  'claim-answer-lost': { network: true },
  'delayed-duplicates': { network: true },
  'claim-stall': { network: true },
  'completion-cut': { network: true },
  'completion-answer-lost': { network: true },
  'completion-stall': { network: true },
  'store-refused': { network: true },
} as const satisfies Record<string, { network: boolean }>;
export type ScenarioId = keyof typeof SCENARIOS;
export const SCENARIO_IDS = Object.keys(SCENARIOS) as ScenarioId[];

export interface FaultSuiteOptions {
  /** The project profile the scaffold is generated for, compiled and loaded under; default the reference (NodeNext ESM). */
  readonly profile?: ProfileCase;
  /** The scenarios to register; default all of them. */
  readonly scenarios?: readonly ScenarioId[];
}

/**
 * The fault scenarios every adapter must pass on a store (PostgreSQL unless told), through the generated scaffold
 * running in two separate app processes. Each one asserts executions, local effects and provider charges per key.
 * An embedded store (SQLite) has no network between app and store: the network scenarios do not apply and are not
 * registered (a printed line names them and says why), and the process-level ones (hammer, SIGKILL, lease lapse,
 * principals) run. With a profile, the scaffold is the one generated for that project profile (faultProfiles.test.ts).
 */
export async function describeFaultSuite(adapter: Adapter, store: StoreKind = 'postgres', options: FaultSuiteOptions = {}): Promise<void> {
  const skipReason = await storeSkipReason(store);
  const label = STORE_LABELS[store];
  const profileLabel = options.profile ? `, profile ${options.profile.label}` : '';
  if (skipReason) console.warn(`fault suite (${adapter} on ${label}${profileLabel}) skipped: ${skipReason}`);

  // The plain idempotent(fn) wrapper records a function's JSON result, not an HTTP answer: core.runOnce stores it as 200.
  const storedStatus = adapter === 'none' ? 200 : 201;
  const embedded = store === 'sqlite';
  const noNetwork = `${label} is embedded in the app process: no network between app and store to fault`;
  const notApplicable: string[] = [];
  const chosen = new Set<ScenarioId>(options.scenarios ?? SCENARIO_IDS);
  /** A chosen scenario; one that faults the network between app and store does not apply to an embedded store, and is named below. */
  const scenario = (id: ScenarioId, name: string, run: () => Promise<void>, timeout?: number) => {
    if (!chosen.has(id)) return;
    if (embedded && SCENARIOS[id].network) notApplicable.push(name);
    else it(`[${id}] ${name}`, run, timeout);
  };
  // PostgreSQL carries the full repetitions for the reference profile; the other stores and profiles run every
  // scenario with fewer (CI budget).
  const full = store === 'postgres' && !options.profile;
  // dynalite (in this test process, in memory) is the slowest server here: fewer keys still contend 10 ways each.
  const hammerKeys = full ? 100 : store === 'dynamodb' ? 20 : 30;
  const killRounds = full ? 5 : 2;
  // At most one request per pooled connection (10 per process): the other stores' claims take more round trips than
  // PostgreSQL's single statement (MySQL: six), so 50 in flight queue for a connection past the 5 s budget on a
  // saturated machine and fail closed with a (true) 503. Exactly-once under contention is what this proves.
  // dynalite answers every request on this test process's one thread, alongside the provider and the barrier: 20 in
  // flight on a saturated machine outlast the 5 s store budget (a true 503 / outcome unknown), so it gets 10.
  const hammerConcurrency = full ? 50 : store === 'dynamodb' ? 10 : 20;

  describe.skipIf(skipReason !== undefined)(`${adapter}: exactly once under faults (two app processes, one ${label}${profileLabel})`, () => {
    const { world, apps } = useWorld(adapter, store, options.profile);

    scenario('hammer', `hammer: ${hammerKeys * 10} requests over ${hammerKeys} keys at concurrency ${hammerConcurrency} across both processes: ${hammerKeys} executions, no 5xx, byte-identical replays`, async () => {
      const w = world();
      // Straight to the store: this is throughput on a healthy network, not a proxy fault.
      const direct = await Promise.all([w.startApp({ direct: true, spare: true }), w.startApp({ direct: true, spare: true })]);
      const keys = Array.from({ length: hammerKeys }, (_, i) => `hammer-${i}`);
      const requests = shuffled(keys.flatMap((key) => Array.from({ length: 10 }, () => key)), 13);
      const answers = await withConcurrency(requests, hammerConcurrency, (key, index) => w.pay(direct[index % 2]!, key));

      expect(answers.filter((answer) => answer.status >= 500).map((answer) => `${answer.status} ${answer.body}`)).toEqual([]);
      expect([...new Set(answers.map((answer) => answer.status))].filter((status) => status !== 201 && status !== 409)).toEqual([]);
      for (const answer of answers.filter((a) => a.status === 409)) {
        expect(isProblem(answer)).toBe(true);
        expect(retryAfter(answer)).toBeGreaterThan(0);
      }
      expect(await w.totals()).toEqual({ executions: hammerKeys, keysExecuted: hammerKeys, maxExecutionsPerKey: 1 });
      expect(w.provider.totalCharges).toBe(hammerKeys);

      // Per key: one fresh answer, every other 201 a replay of exactly its bytes, and a replay afterwards from
      // either process is still the same bytes.
      const finals = await withConcurrency(keys, 50, (key, index) => w.pay(direct[(index + 1) % 2]!, key));
      await Promise.all(direct.map((app) => app.kill()));
      keys.forEach((key, index) => {
        const mine = answers.filter((_, i) => requests[i] === key && answers[i]!.status === 201);
        const fresh = mine.filter((answer) => !replayed(answer));
        expect(fresh, key).toHaveLength(1);
        for (const answer of mine) expect(answer.body, key).toBe(fresh[0]!.body);
        expect(finals[index]!.status, key).toBe(201);
        expect(replayed(finals[index]!), key).toBe(true);
        expect(finals[index]!.body, key).toBe(fresh[0]!.body);
      });
    }, 180_000);

    scenario('sigkill', `SIGKILL mid-action, ${killRounds * 4} trials: ${killRounds} kills, each of a process holding 4 actions (2 stopped before their side effect, 2 after), retried on another process`, async () => {
      const w = world();
      // Processes of their own, straight to the store: here the fault is the process dying, not the network.
      let victim = await w.startApp({ direct: true, spare: true });
      let survivor = await w.startApp({ direct: true, spare: true });
      for (let round = 0; round < killRounds; round++) {
        const trials = (['before', 'after'] as const).flatMap((point) => [0, 1].map((n) => ({ point, key: `sigkill-${round}-${point}-${n}` })));
        const pending = trials.map(({ point, key }) => w.payOrLose(victim, key, { pause: point }));
        for (const { point, key } of trials) expect((await w.barrier.arrival(point, key)).worker).toBe(victim.pid);
        // The replacement boots while this round's retries run.
        const replacement = w.startApp({ direct: true, spare: true });
        await victim.kill('SIGKILL');
        expect(await Promise.all(pending)).toEqual(trials.map(() => 'connection lost'));

        for (const { point, key } of trials) {
          // The dead owner's lease is still live: a duplicate is told to come back, nothing runs.
          const early = await w.pay(survivor, key);
          expect(early.status, `${key}: ${early.body}`).toBe(409);
          expect(retryAfter(early)).toBeGreaterThan(0);

          await w.expireLease(key);
          const retry = await w.pay(survivor, key);
          expect(retry.status, `${key}: ${retry.body}`).toBe(201);
          expect(replayed(retry)).toBe(false);
          const replay = await w.pay(survivor, key);
          expect(replayed(replay)).toBe(true);
          expect(replay.body).toBe(retry.body);

          // Lease mode: the action ran twice (once killed); its local write ran once per attempt that reached it,
          // and the provider deduplicated the second charge because the retry derived the same provider key.
          expect(await w.counts(key), key).toEqual({ executions: 2, effects: point === 'before' ? 1 : 2, charges: 1 });
          // Both attempts derived one provider key: that is what lets the provider deduplicate the re-execution.
          const providerKeys = await w.providerKeys(key);
          expect(providerKeys).toHaveLength(1);
          const providerKey = providerKeys[0];
          const calls = w.provider.calls.filter((call) => call.idempotencyKey === providerKey);
          expect(calls.map((call) => call.replayed), key).toEqual(point === 'before' ? [false] : [false, true]);
          expect((JSON.parse(retry.body) as { charge: string }).charge).toBe(calls[0]!.chargeId);
        }
        victim = survivor;
        survivor = await replacement;
      }
      await Promise.all([victim.kill(), survivor.kill()]);
    }, 240_000);

    scenario('lease-lapse', 'lease lapses while the action still runs: the takeover answers, the late owner is fenced out and never answers 2xx', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'lease-lapses-mid-action';
      const slow = w.pay(first, key, { pause: 'after' });
      const arrival = await w.barrier.arrival('after', key);
      const owner = await w.record(key);
      expect(owner?.status).toBe('PROCESSING');

      await w.expireLease(key);
      const takeover = await w.pay(second, key);
      expect(takeover.status, takeover.body).toBe(201);
      const taken = (await w.record(key))!.token;
      if (w.store.tokensIncrease) expect(BigInt(taken)).toBeGreaterThan(BigInt(owner!.token));
      else expect(taken).not.toBe(owner!.token);

      arrival.release();
      const late = await slow;
      expect(late.status, late.body).toBeGreaterThanOrEqual(400);
      expect(isProblem(late)).toBe(true);
      expect(late.body).not.toContain('pay_');

      const stored = await w.record(key);
      expect(stored).toMatchObject({ status: 'COMPLETED', responseStatus: storedStatus, body: takeover.body });
      const replay = await w.pay(first, key);
      expect(replayed(replay)).toBe(true);
      expect(replay.body).toBe(takeover.body);
      expect(await w.counts(key)).toEqual({ executions: 2, effects: 2, charges: 1 });
    });

    scenario('two-principals', 'two principals send the same Idempotency-Key: each runs once as its own request, and the provider never replays one customer\'s charge to the other', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'one-key-two-principals';
      const alice = await w.pay(first, key, { user: 'usr_alice' });
      const bob = await w.pay(second, key, { user: 'usr_bob' });
      expect([alice.status, bob.status]).toEqual([201, 201]);
      expect(replayed(bob)).toBe(false);
      expect((await w.counts(key)).executions).toBe(2);
      const [aliceCharge, bobCharge] = [alice, bob].map((answer) => (JSON.parse(answer.body) as { charge: string }).charge);
      expect(bobCharge, "the provider replayed one principal's charge to the other: their derived provider keys are equal").not.toBe(aliceCharge);
    });

    scenario('claim-cut', `connection cut as the claim is sent (${label} never sees it): no record, no execution; the retry runs once`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'claim-cut-before-server';
      const cut = w.proxy.cutOn(w.store.claim, 'before-server');
      const answer = await w.pay(first, key);
      await cut.fired;
      // Either the runtime retried the claim on a fresh connection (201), or it failed closed (503): both are true.
      if (answer.status === 503) {
        expect(retryAfter(answer)).toBeGreaterThan(0);
        expect(await w.record(key)).toBeUndefined();
        expect(await w.counts(key)).toEqual({ executions: 0, effects: 0, charges: 0 });
      } else {
        expect(answer.status, answer.body).toBe(201);
      }
      const retry = await w.pay(second, key);
      expect(retry.status, retry.body).toBe(201);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('claim-answer-lost', `claim committed but its answer lost: nothing runs, duplicates get 409 + Retry-After while the lease lives (or the store gave the claim back), then the key runs once`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'claim-answer-lost';
      const cut = w.proxy.cutOn(w.store.claim, 'after-commit');
      const answer = await w.pay(first, key);
      await cut.fired;
      expect([409, 503], answer.body).toContain(answer.status);
      expect(retryAfter(answer)).toBeGreaterThan(0);
      expect((await w.record(key))?.status).toBe('PROCESSING');
      expect(await w.counts(key)).toEqual({ executions: 0, effects: 0, charges: 0 });

      const duplicate = await w.pay(second, key);
      if (duplicate.status === 201) {
        // Redis and DynamoDB give back a claim whose answer they lost (a release fenced by its token, sent as the
        // client is told 503): the key is free at once, and the duplicate is its one execution.
        expect(w.store.releasesLostClaims, `${label} let a duplicate run while the lost claim's lease lived`).toBe(true);
        expect(replayed(duplicate)).toBe(false);
      } else {
        expect(duplicate.status, duplicate.body).toBe(409);
        expect(retryAfter(duplicate)).toBeGreaterThan(0);
        await w.expireLease(key);
        const retry = await w.pay(second, key);
        expect(retry.status, retry.body).toBe(201);
      }
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('delayed-duplicates', `every packet to and from ${label} delayed: 20 concurrent duplicates across both processes run once, none gets a 5xx`, async () => {
      const w = world();
      const key = 'delayed-duplicates';
      w.proxy.delay(10);
      try {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => w.pay(w.apps[i % 2]!, key)));
        expect(answers.filter((answer) => answer.status >= 500).map((answer) => answer.body)).toEqual([]);
        const ok = answers.filter((answer) => answer.status === 201);
        expect(ok.length).toBeGreaterThan(0);
        expect(new Set(ok.map((answer) => answer.body)).size).toBe(1);
        expect(answers.every((answer) => answer.status === 201 || (answer.status === 409 && retryAfter(answer) > 0))).toBe(true);
      } finally {
        w.proxy.delay(0);
      }
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('claim-stall', `store stalls during the claim: the 503 must be true, so once the network heals the held claim cannot take the key`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'claim-stalled';
      // A warm pool, so the claim itself (not a connection attempt) is what the partition holds.
      expect((await w.pay(first, `${key}-warm-up`)).status).toBe(201);
      w.proxy.stall();
      const answer = await w.pay(first, key);
      expect(answer.status, answer.body).toBe(503);
      expect(retryAfter(answer)).toBeGreaterThan(0);
      // The partition heals; whatever the app had sent reaches the store now, in order, as TCP would deliver it.
      w.proxy.heal();
      await w.proxy.quiet();
      const retry = await w.pay(second, key);
      expect(retry.status, `the client was told "not processed", yet the key is taken: ${retry.body}`).toBe(201);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('completion-cut', `completion write lost before it reaches ${label}: retried with the same fencing token, the client gets its 201 and the action ran once`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'completion-cut-before-server';
      const cut = w.proxy.cutOn(w.store.completion, 'before-server');
      const answer = await w.pay(first, key);
      await cut.fired;
      expect(answer.status, answer.body).toBe(201);
      expect(await w.record(key)).toMatchObject({ status: 'COMPLETED', responseStatus: storedStatus, body: answer.body });
      const replay = await w.pay(second, key);
      expect(replayed(replay)).toBe(true);
      expect(replay.body).toBe(answer.body);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('completion-answer-lost', `completion committed but its answer lost: 201 or "outcome unknown", never "not processed"; the retry replays the recorded bytes`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'completion-answer-lost';
      const cut = w.proxy.cutOn(w.store.completion, 'after-commit');
      const answer = await w.pay(first, key);
      await cut.fired;
      const stored = await w.record(key);
      expect(stored).toMatchObject({ status: 'COMPLETED', responseStatus: storedStatus });
      if (answer.status === 201) expect(answer.body).toBe(stored!.body);
      else expectOutcomeUnknown(answer);
      const retry = await w.pay(second, key);
      expect(retry.status, retry.body).toBe(201);
      expect(replayed(retry)).toBe(true);
      expect(retry.body).toBe(stored!.body);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    scenario('completion-stall', `store unreachable from the side effect until past the completion deadline: 5xx "outcome unknown", and no retry charges again`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'completion-stalled';
      const pending = w.pay(first, key, { pause: 'after' });
      const arrival = await w.barrier.arrival('after', key);
      w.proxy.stall();
      arrival.release();
      const answer = await pending;
      expectOutcomeUnknown(answer);
      w.proxy.heal();
      await w.proxy.quiet();
      const retry = await w.pay(second, key);
      if (retry.status === 409) expect(retryAfter(retry)).toBeGreaterThan(0);
      else {
        expect(retry.status, retry.body).toBe(201);
        expect(replayed(retry)).toBe(true);
      }
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    }, 240_000);

    scenario('store-refused', `${label} refuses connections: 503 + Retry-After and nothing runs; once it is back the same key runs once`, async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'store-refused';
      // Warm pools: the database going away must drop connections the apps hold idle, not only refuse new ones.
      for (const app of [first, second]) expect((await w.pay(app, `${key}-warm-up-${app.pid}`)).status).toBe(201);
      w.proxy.refuse();
      for (const app of [first, second]) {
        // A dropped idle connection must not take the process down (pg's Pool emits 'error' for it).
        const refused = await w.pay(app, key).catch((error: Error) => {
          throw new Error(`the app process died when the store dropped its connections: ${app.stderr().split('\n').slice(0, 6).join('\n')}`, { cause: error });
        });
        expect(refused.status, refused.body).toBe(503);
        expect(isProblem(refused)).toBe(true);
        expect(retryAfter(refused)).toBeGreaterThan(0);
      }
      expect(await w.counts(key)).toEqual({ executions: 0, effects: 0, charges: 0 });
      expect(await w.record(key)).toBeUndefined();

      w.proxy.heal();
      const retry = await w.pay(second, key);
      expect(retry.status, retry.body).toBe(201);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    if (notApplicable.length > 0) console.warn(`fault suite (${adapter} on ${label}${profileLabel}): ${notApplicable.length} network scenarios do not apply, ${noNetwork}: ${notApplicable.join('; ')}`);
  });
}
