import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyCore } from '../core.js';
import { providerKeyBase } from '../keys.js';
import { PgIdempotencyStore } from '../pgStore.js';
import { ACTIONS, POLICY } from '../settings.js';
import type { ActionSettings, IdempotencyContext } from '../types.js';
import { reconcileStuck, type ProviderLookup } from './reconcile.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'reconciliation tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in',
  );

// A cast, not `!`: the JavaScript scaffold keeps a cast as JSDoc, and has no way to say `!` of a call.
const ACTION = (Object.values(ACTIONS) as ActionSettings[]).find(
  (action) => action.mode === 'lease',
) as ActionSettings;

/** A provider double that deduplicates by key like the real ones, and counts what it was asked. */
class FakeProvider implements ProviderLookup {
  readonly provider = 'fake';
  readonly charges = new Map<string, string>();
  creates = 0;
  lookups = 0;
  charge(context: IdempotencyContext): string {
    const key = providerKeyBase(context);
    this.creates++;
    let charge = this.charges.get(key);
    if (charge === undefined) {
      charge = `ch_${this.charges.size + 1}`;
      this.charges.set(key, charge);
    }
    return charge;
  }
  async lookup(record: { scope: string; key: string; action: string }) {
    this.lookups++;
    const id = this.charges.get(providerKeyBase(record));
    return id
      ? { verdict: 'found' as const, reference: id, response: { status: 201, body: { id } } }
      : { verdict: 'absent' as const };
  }
}

describe.skipIf(!DATABASE_URL)(`reconciliation (${ACTION?.codeName})`, () => {
  const schema = `idem_test_${randomBytes(6).toString('hex')}`;
  let admin: pg.Pool;
  let pool: pg.Pool;
  let store: PgIdempotencyStore;
  let core: IdempotencyCore;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}`, max: 10 });
    await pool.query(
      readFileSync(new URL('../migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    store = new PgIdempotencyStore({
      pool,
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: POLICY.statementTimeoutMs,
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
    });
    core = new IdempotencyCore(store, { ...POLICY, inFlight: 'reject' });
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  /** A worker that claimed, maybe reached the provider, then died: its lease is made to lapse. */
  async function crashAfter(key: string, provider: FakeProvider, charged: boolean): Promise<void> {
    const decision = await core.begin(ACTION, { scope: 'user-1', key, fingerprint: 'f'.repeat(64) });
    if (decision.kind !== 'execute') throw new Error(`expected to claim ${key}`);
    if (charged) provider.charge(decision.claim.context);
    await pool.query(`UPDATE ${POLICY.table} SET locked_until = now() - interval '1 minute' WHERE key = $1`, [
      key,
    ]);
  }

  const lookups = (provider: FakeProvider) => ({ [ACTION.codeName]: provider });

  it('dry run reports and writes nothing', async () => {
    const provider = new FakeProvider();
    await crashAfter('dry', provider, true);
    const report = await reconcileStuck({
      store,
      policy: POLICY,
      actions: ACTIONS,
      lookups: lookups(provider),
      dryRun: true,
    });
    expect(report.results.find((result) => result.key === 'dry')?.outcome).toBe('completed');
    expect((await pool.query(`SELECT status FROM ${POLICY.table} WHERE key = 'dry'`)).rows[0].status).toBe(
      'PROCESSING',
    );
  });

  it('charged at the provider: completed from the provider, and the retry replays without a second charge', async () => {
    const provider = new FakeProvider();
    await crashAfter('charged', provider, true);
    await crashAfter('never', provider, false);
    const report = await reconcileStuck({
      store,
      policy: POLICY,
      actions: ACTIONS,
      lookups: lookups(provider),
    });
    const outcome = (key: string) => report.results.find((result) => result.key === key)?.outcome;
    expect(outcome('charged')).toBe('completed');
    expect(outcome('never')).toBe('released');
    const retry = await core.begin(ACTION, { scope: 'user-1', key: 'charged', fingerprint: 'f'.repeat(64) });
    expect(retry.kind).toBe('replay');
    const rerun = await core.begin(ACTION, { scope: 'user-1', key: 'never', fingerprint: 'f'.repeat(64) });
    expect(rerun.kind).toBe('execute');
    if (rerun.kind === 'execute') provider.charge(rerun.claim.context);
    expect(provider.charges.size).toBe(2);
    expect(provider.creates).toBe(2);
  });
});
