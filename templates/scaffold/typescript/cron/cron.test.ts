import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyCore } from '../core.js';
import { PgIdempotencyStore } from '../pgStore.js';
import { ACTIONS, POLICY } from '../settings.js';
import type { ActionSettings } from '../types.js';
import { CronGuard, intervalTask, slotKey, slotStart } from './guard.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'scheduled-job tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in',
  );

const ACTION = (Object.values(ACTIONS) as ActionSettings[]).find((action) => action.trigger === 'cron')!;
const MINUTE = 60_000;

describe.skipIf(!DATABASE_URL)(`scheduled jobs (${ACTION?.codeName})`, () => {
  const schema = `idem_test_${randomBytes(6).toString('hex')}`;
  let admin: pg.Pool;
  let pool: pg.Pool;
  const stores: PgIdempotencyStore[] = [];

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}`, max: 20 });
    await pool.query(
      readFileSync(new URL('../migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    for (let i = 0; i < 2; i++)
      stores.push(
        new PgIdempotencyStore({
          pool,
          table: POLICY.table,
          stepTable: POLICY.stepTable,
          timeoutMs: POLICY.statementTimeoutMs,
          acquireTimeoutMs: POLICY.acquireTimeoutMs,
          lockTimeoutMs: POLICY.lockTimeoutMs,
        }),
      );
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  it('two schedulers firing the same slot (clocks a few seconds apart) run the job once', async () => {
    let runs = 0;
    const guards = stores.map(
      (store) => new CronGuard({ core: new IdempotencyCore(store, { ...POLICY, inFlight: 'reject' }) }),
    );
    const boundary = Math.ceil(Date.now() / MINUTE) * MINUTE;
    const outcomes = await Promise.all([
      guards[0]!.runInterval(ACTION, 'job-a', MINUTE, async () => void runs++, boundary - 2_000),
      guards[1]!.runInterval(ACTION, 'job-a', MINUTE, async () => void runs++, boundary + 3_000),
    ]);
    expect(runs).toBe(1);
    expect(outcomes.sort()).toEqual(outcomes.includes('overlap') ? ['overlap', 'ran'] : ['duplicate', 'ran']);
  });

  it("a setInterval tick's failed run goes to onError, not to an unhandled rejection, and leaves the slot free", async () => {
    const guard = new CronGuard({ core: new IdempotencyCore(stores[0]!, POLICY) });
    const failed = new Promise<unknown>((resolve) => {
      const tick = intervalTask(
        guard,
        ACTION,
        'job-tick',
        MINUTE,
        async () => {
          throw new Error('job failed');
        },
        resolve,
      );
      expect(tick()).toBeUndefined();
    });
    expect(((await failed) as Error).message).toBe('job failed');
    // The claim was released: a later fire of the slot runs the job.
    await expect(guard.runInterval(ACTION, 'job-tick', MINUTE, async () => void 0)).resolves.toBe('ran');
  });

  it('a slot whose run died is reported as crashed by the next slot', async () => {
    const missed: string[] = [];
    const guard = new CronGuard({
      core: new IdempotencyCore(stores[0]!, POLICY),
      events: { missed: (_job, _slot, reason) => void missed.push(reason) },
    });
    const first = slotStart(MINUTE, Date.now() - 10 * MINUTE);
    await expect(guard.runInterval(ACTION, 'job-b', MINUTE, async () => void 0, first)).resolves.toBe('ran');
    // The next slot's run "dies": its record stays PROCESSING with a lapsed lease.
    const second = new Date(first.getTime() + MINUTE);
    await stores[0]!.claim({
      scope: 'global',
      key: slotKey('job-b', second),
      action: ACTION.codeName,
      fingerprint: '0'.repeat(64),
      algorithm: POLICY.fingerprintAlgorithm,
      leaseMs: 1,
      retentionMs: POLICY.retentionMs,
    });
    await pool.query(`UPDATE ${POLICY.table} SET locked_until = now() - interval '1 second' WHERE key = $1`, [
      slotKey('job-b', second),
    ]);
    await guard.runInterval(ACTION, 'job-b', MINUTE, async () => void 0, second.getTime() + MINUTE);
    expect(missed).toEqual(['crashed']);
  });

  it('a re-run of a slot after a crash halfway through the batch skips the items already done', async () => {
    const guard = new CronGuard({ core: new IdempotencyCore(stores[0]!, POLICY) });
    const slot = slotStart(MINUTE, Date.now() - 30 * MINUTE);
    const done: string[] = [];
    const batch = (crashAfter?: number) => async (context: { key: string }) => {
      const items = ['inv-1', 'inv-2', 'inv-3'];
      for (let index = 0; index < items.length; index++) {
        const item = items[index]!;
        if (index === crashAfter) throw new Error('worker died');
        await guard.runItem(ACTION, context, item, async () => void done.push(item));
      }
    };
    await expect(guard.run(ACTION, 'job-c', slot, batch(2))).rejects.toThrow('worker died');
    await expect(guard.run(ACTION, 'job-c', slot, batch())).resolves.toBe('ran');
    expect(done).toEqual(['inv-1', 'inv-2', 'inv-3']);
  });
});
