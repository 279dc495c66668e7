import { describe, expect, it } from 'vitest';
import type { Adapter } from './appProcess.js';
import { isProblem, retryAfter, skipReason, useWorld } from './faultSuite.js';

/**
 * Faults whose required behaviour (issue 13, CONTRACT §5) the generated runtime does not have yet. Same world and apps
 * as the fault suite; these assertions are the contract and stay as they are until the runtime meets them, then move
 * to faultSuite.ts.
 */
export function describeAwaitingRuntime(adapter: Adapter): void {
  describe.skipIf(skipReason !== undefined)(`${adapter}: store failures the runtime must survive truthfully (awaiting a runtime fix)`, () => {
    const { world, apps } = useWorld(adapter);

    it('PostgreSQL refuses connections: 503 + Retry-After and nothing runs; once it is back the same key runs once', async () => {
      const w = world();
      const [first, second] = apps();
      const key = 'store-refused';
      // Warm pools: the database going away must drop connections the apps hold idle, not only refuse new ones.
      for (const app of [first, second]) expect((await w.pay(app, `${key}-warm-up-${app.pid}`)).status).toBe(201);
      w.proxy.refuse();
      for (const app of [first, second]) {
        // A dropped idle connection must not take the process down (pg's Pool emits 'error' for it).
        const refused = await w.pay(app, key).catch((error: Error) => {
          throw new Error(`the app process died when PostgreSQL dropped its connections: ${app.stderr().split('\n').slice(0, 6).join('\n')}`, { cause: error });
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

  });
}
