import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyCore } from '../core.js';
import { PgIdempotencyStore } from '../pgStore.js';
import { ACTIONS, POLICY } from '../settings.js';
import type { ActionSettings, IdempotencyContext } from '../types.js';
import { idempotentHandler, messageKey } from './handler.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'consumer tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in',
  );

const ACTION = (Object.values(ACTIONS) as ActionSettings[]).find((action) => action.trigger === 'consumer')!;

interface Message {
  readonly id: string;
  readonly fail?: boolean;
}

describe.skipIf(!DATABASE_URL)(`consumers (${ACTION?.codeName})`, () => {
  const schema = `idem_test_${randomBytes(6).toString('hex')}`;
  let admin: pg.Pool;
  let pool: pg.Pool;
  let core: IdempotencyCore;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}`, max: 20 });
    await pool.query(
      readFileSync(new URL('../migrations/001_create_idempotency_store.sql', import.meta.url), 'utf8'),
    );
    await pool.query('CREATE TABLE test_effects (message_id text NOT NULL)');
    const store = new PgIdempotencyStore({
      pool,
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: POLICY.statementTimeoutMs,
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
      lockTimeoutMs: POLICY.lockTimeoutMs,
    });
    core = new IdempotencyCore(store, { ...POLICY, inFlight: 'reject' });
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  /** The effect, written the way the action's mode prescribes (transactional: through the claim's transaction). */
  async function effect(message: Message, context: IdempotencyContext): Promise<void> {
    if (message.fail) throw new Error('downstream refused');
    // A variable, so the cast keeps its JSDoc type in the JavaScript scaffold (`(a as T ?? b).m` loses it).
    const db = (context.db as pg.PoolClient | undefined) ?? pool;
    await db.query('INSERT INTO test_effects (message_id) VALUES ($1)', [message.id]);
  }

  const effects = async (id: string) =>
    Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM test_effects WHERE message_id = $1', [id]))
        .rows[0]?.n ?? 0,
    );

  it('a redelivered or republished message runs once', async () => {
    const handle = idempotentHandler<Message>({
      core,
      action: ACTION,
      messageIdOf: (m) => m.id,
      handle: effect,
    });
    expect(await handle({ id: 'm-1' })).toEqual({ kind: 'done' });
    expect(await handle({ id: 'm-1' })).toEqual({ kind: 'duplicate' });
    expect(await effects('m-1')).toBe(1);
  });

  it('concurrent deliveries of one message: one runs, the others are busy or duplicate, never a second run', async () => {
    const handle = idempotentHandler<Message>({
      core,
      action: ACTION,
      messageIdOf: (m) => m.id,
      handle: effect,
    });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => handle({ id: 'm-2' })));
    expect(outcomes.filter((outcome) => outcome.kind === 'done')).toHaveLength(1);
    expect(await effects('m-2')).toBe(1);
  });

  it('a failure releases the key; after maxAttempts the record is FAILED and redeliveries are not run', async () => {
    let attempt = 0;
    const handle = idempotentHandler<Message>({
      core,
      action: ACTION,
      messageIdOf: (m) => m.id,
      handle: effect,
      maxAttempts: 2,
      attemptOf: () => ++attempt,
    });
    await expect(handle({ id: 'm-3', fail: true })).rejects.toThrow('downstream refused');
    expect((await handle({ id: 'm-3', fail: true })).kind).toBe('dead');
    const { rows } = await pool.query(`SELECT status FROM ${POLICY.table} WHERE key = $1`, [
      messageKey(ACTION, 'm-3'),
    ]);
    expect(rows[0]?.status).toBe('FAILED');
    expect((await handle({ id: 'm-3' })).kind).toBe('duplicate');
    expect(await effects('m-3')).toBe(0);
  });
});
