import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyCore } from '../core.js';
import { PgIdempotencyStore } from '../pgStore.js';
import { ACTIONS, POLICY } from '../settings.js';
import type { ActionSettings } from '../types.js';
import { PgOrderingGuard } from './ordering.js';
import { stripeSource, type StripeEvent } from './verify.js';
import { createWebhookProcessor } from './webhooks.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL)
  console.warn(
    'webhook tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in',
  );

// A cast, not `!`: the JavaScript scaffold keeps a cast as JSDoc, and has no way to say `!` of a call.
const ACTION = (Object.values(ACTIONS) as ActionSettings[]).find(
  (action) => action.trigger === 'webhook',
) as ActionSettings;
const SECRET = 'whsec_test_secret';

/** Signs like Stripe: t=<seconds>,v1=<HMAC-SHA256 of "t.body">. */
function signed(event: Record<string, unknown>, secret = SECRET) {
  const rawBody = Buffer.from(JSON.stringify(event));
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  return { rawBody, headers: { 'stripe-signature': `t=${t},v1=${v1}` } };
}

const stripeEvent = (id: string, object: string, created: number, type = 'payment_intent.succeeded') => ({
  id,
  type,
  created,
  data: { object: { id: object, amount: 4999 } },
});

describe.skipIf(!DATABASE_URL)(`webhooks (${ACTION?.codeName})`, () => {
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
    await pool.query(
      readFileSync(new URL('../migrations/002_webhook_object_versions.sql', import.meta.url), 'utf8'),
    );
    await pool.query('CREATE TABLE test_effects (event_id text NOT NULL)');
    const store = new PgIdempotencyStore({
      pool,
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: POLICY.statementTimeoutMs,
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
      lockTimeoutMs: POLICY.lockTimeoutMs,
    });
    core = new IdempotencyCore(store, POLICY);
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  function processor(options: { slow?: Promise<void>; started?: () => void; ordering?: boolean } = {}) {
    return createWebhookProcessor<StripeEvent>({
      core,
      action: ACTION,
      source: stripeSource(SECRET),
      handles: (type) => type.startsWith('payment_intent.'),
      ...(options.ordering ? { ordering: new PgOrderingGuard(pool) } : {}),
      handle: async (event, context) => {
        options.started?.();
        await options.slow;
        // A variable, so the cast keeps its JSDoc type in the JavaScript scaffold (`(a as T ?? b).m` loses it).
        const db = (context.db as pg.PoolClient | undefined) ?? pool;
        await db.query('INSERT INTO test_effects (event_id) VALUES ($1)', [event.id]);
      },
    });
  }

  const effects = async (id: string) =>
    Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM test_effects WHERE event_id = $1', [id]))
        .rows[0]?.n ?? 0,
    );

  it('rejects a delivery whose signature does not match, before touching the store', async () => {
    const response = await processor()(signed(stripeEvent('evt_forged', 'pi_1', 1), 'whsec_wrong'));
    expect(response.status).toBe(400);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${POLICY.table}`)).rows[0].n).toBe(0);
  });

  it('concurrent duplicate deliveries of one event: applied once, every delivery gets 2xx', async () => {
    let open = () => {};
    let started = () => {};
    const slow = new Promise<void>((resolve) => (open = resolve));
    const running = new Promise<void>((resolve) => (started = resolve));
    const deliver = processor({ slow, started });
    const delivery = signed(stripeEvent('evt_concurrent', 'pi_2', 100));
    const pending = Array.from({ length: 5 }, () => deliver(delivery));
    // The first delivery is inside the handler; the others are claiming or waiting on it.
    await running;
    open();
    const answers = await Promise.all(pending);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await effects('evt_concurrent')).toBe(1);
    const resend = await deliver(signed(stripeEvent('evt_concurrent', 'pi_2', 100)));
    expect(resend.status).toBe(200);
    expect(await effects('evt_concurrent')).toBe(1);
  });

  it('event types ignored on purpose get 2xx and leave no record', async () => {
    const response = await processor()(signed(stripeEvent('evt_ignored', 'cus_1', 5, 'customer.created')));
    expect(response.status).toBe(200);
    expect(await effects('evt_ignored')).toBe(0);
  });

  it('an event older than the newest applied for its object is acknowledged, not applied', async () => {
    const deliver = processor({ ordering: true });
    expect((await deliver(signed(stripeEvent('evt_new', 'pi_3', 200)))).status).toBe(200);
    const old = await deliver(signed(stripeEvent('evt_old', 'pi_3', 150, 'payment_intent.processing')));
    expect(old.status).toBe(200);
    expect(JSON.parse(old.body)).toMatchObject({ stale: true });
    expect(await effects('evt_new')).toBe(1);
    expect(await effects('evt_old')).toBe(0);
  });
});
