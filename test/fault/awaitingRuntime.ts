import { describe, expect, it } from 'vitest';
import type { Adapter } from './appProcess.js';
import type { Answer } from './faultWorld.js';
import { COMPLETION_SQL, isProblem, replayed, retryAfter, skipReason, useWorld } from './faultSuite.js';

/** A 5xx whose problem says the outcome is unknown (CONTRACT §5), and never that the request was not processed. */
function expectOutcomeUnknown(answer: Answer): void {
  expect(answer.status, answer.body).toBeGreaterThanOrEqual(500);
  expect(isProblem(answer)).toBe(true);
  const problem = JSON.parse(answer.body) as { type?: string; title?: string; detail?: string };
  expect(`${problem.type} ${problem.title}`, answer.body).toMatch(/unknown/i);
  expect(problem.detail ?? '', answer.body).not.toMatch(/not (been )?processed/i);
}

/**
 * Store failures around the action whose required behaviour (issue 13, CONTRACT §5) the generated runtime does not
 * have yet. Same world and apps as the fault suite; these assertions are the contract and stay as they are until the
 * runtime meets them.
 */
export function describeAwaitingRuntime(adapter: Adapter): void {
  describe.skipIf(skipReason !== undefined)(`${adapter}: store failures the runtime must survive truthfully (awaiting the runtime fixes of issue 13)`, () => {
    const { world, apps } = useWorld(adapter);

    it('store stalls during the claim: the 503 must be true, so once the network heals the held claim cannot take the key', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'claim-stalled';
      // A warm pool, so the claim itself (not a connection attempt) is what the partition holds.
      expect((await w.pay(first, `${key}-warm-up`)).status).toBe(201);
      w.proxy.stall();
      const answer = await w.pay(first, key);
      expect(answer.status, answer.body).toBe(503);
      expect(retryAfter(answer)).toBeGreaterThan(0);
      // The partition heals; whatever the app had sent reaches PostgreSQL now, in order, as TCP would deliver it.
      w.proxy.heal();
      await w.proxy.quiet();
      const retry = await w.pay(second, key);
      expect(retry.status, `the client was told "not processed", yet the key is taken: ${retry.body}`).toBe(201);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    it('completion write lost before it reaches PostgreSQL: retried with the same fencing token, the client gets its 201 and the action ran once', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'completion-cut-before-server';
      const cut = w.proxy.cutOn(COMPLETION_SQL, 'before-server');
      const answer = await w.pay(first, key);
      await cut.fired;
      expect(answer.status, answer.body).toBe(201);
      expect(await w.record(key)).toMatchObject({ status: 'COMPLETED', responseStatus: 201, body: answer.body });
      const replay = await w.pay(second, key);
      expect(replayed(replay)).toBe(true);
      expect(replay.body).toBe(answer.body);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    it('completion committed but its answer lost: 201 or "outcome unknown", never "not processed"; the retry replays the recorded bytes', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'completion-answer-lost';
      const cut = w.proxy.cutOn(COMPLETION_SQL, 'after-commit');
      const answer = await w.pay(first, key);
      await cut.fired;
      const stored = await w.record(key);
      expect(stored).toMatchObject({ status: 'COMPLETED', responseStatus: 201 });
      if (answer.status === 201) expect(answer.body).toBe(stored!.body);
      else expectOutcomeUnknown(answer);
      const retry = await w.pay(second, key);
      expect(retry.status, retry.body).toBe(201);
      expect(replayed(retry)).toBe(true);
      expect(retry.body).toBe(stored!.body);
      expect(await w.counts(key)).toEqual({ executions: 1, effects: 1, charges: 1 });
    });

    it('store unreachable from the side effect until past the completion deadline: 5xx "outcome unknown", and no retry charges again', async () => {
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

    // Last: it ends with both processes' pools having lost every connection.
    it('PostgreSQL refuses connections: 503 + Retry-After and nothing runs; once it is back the same key runs once', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'store-refused';
      w.proxy.refuse();
      for (const app of [first, second]) {
        const refused = await w.pay(app, key);
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

  });
}
