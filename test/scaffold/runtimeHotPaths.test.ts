import net from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgMessageReader } from '../fault/pgMessages.js';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { DATABASE_URL, createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`runtime hot paths against PostgreSQL skipped: ${skip}`);

/** What the app sent to PostgreSQL, one entry per statement it asked to run, and the raw message types. */
interface Sent {
  readonly sql: string[];
  readonly types: string[];
  /** Waits for the server: a Sync or Query sent while no earlier one awaits its ReadyForQuery starts a new one. */
  roundTrips: number;
}

/**
 * A loopback TCP proxy in front of PostgreSQL that records every frontend message (which SQL each connection ran,
 * Parse/Bind/Sync) and can hold everything a connection sends from a given statement on, delivering it in order
 * (with the close of a connection the app gave up meanwhile) on release, as a network partition would.
 */
class WireRecorder {
  private sent: Sent = { sql: [], types: [], roundTrips: 0 };
  private holdRule: { match: RegExp; arrived: () => void } | undefined;
  private readonly held = new Set<{ release(): Promise<void> }>();

  private constructor(readonly server: net.Server) {}

  static async start(): Promise<WireRecorder> {
    const target = new URL(DATABASE_URL);
    const recorder: WireRecorder = new WireRecorder(net.createServer({ allowHalfOpen: true }, (client) => recorder.link(client, target)));
    await new Promise<void>((resolve) => recorder.server.listen(0, '127.0.0.1', resolve));
    return recorder;
  }

  url(schema: Schema): string {
    const url = new URL(schema.url);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as net.AddressInfo).port);
    return url.toString();
  }

  /** Everything sent since the last take(). */
  take(): Sent {
    const sent = this.sent;
    this.sent = { sql: [], types: [], roundTrips: 0 };
    return sent;
  }

  /** The next connection that sends a statement matching `match` is held from that message on; resolves on arrival. */
  holdOn(match: RegExp): Promise<void> {
    return new Promise((arrived) => (this.holdRule = { match, arrived }));
  }

  /** Delivers what was held; resolves once PostgreSQL has processed it and closed those connections. */
  async release(): Promise<void> {
    await Promise.all([...this.held].map((held) => held.release()));
    this.held.clear();
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private link(client: net.Socket, target: URL): void {
    const server = net.connect({ host: target.hostname, port: Number(target.port || 5432), allowHalfOpen: true });
    const reader = new PgMessageReader('frontend');
    const answers = new PgMessageReader('backend');
    reader.onSslRequest = () => (answers.skipBytes += 1);
    // Syncs and Queries sent whose ReadyForQuery has not come back yet (pipelined statements share one wait).
    let awaiting = 0;
    let held: Buffer[] | undefined;
    let parsed: string | undefined;
    let closed!: () => void;
    const clientClosed = new Promise<void>((resolve) => (closed = resolve));
    const serverClosed = new Promise<void>((resolve) => server.once('close', () => resolve()));
    client.on('error', () => undefined);
    server.on('error', () => client.destroy());
    server.on('data', (chunk: Buffer) => {
      for (const message of answers.push(chunk)) if (message.type === 'Z') awaiting = Math.max(0, awaiting - 1);
      if (!client.destroyed) client.write(chunk);
    });
    server.on('end', () => client.end());
    client.on('data', (chunk: Buffer) => {
      for (const message of reader.push(chunk)) {
        if (message.type) this.sent.types.push(message.type);
        if (message.type === 'S' || message.type === 'Q') {
          if (awaiting === 0) this.sent.roundTrips++;
          awaiting++;
        }
        // Each statement is recorded once: at its Bind (a named statement), at the Parse the next Bind executes
        // (unnamed), or as a simple Query.
        if (message.type === 'P') parsed = message.sql;
        else if (message.type === 'B') {
          const sql = message.sql ?? parsed;
          if (sql !== undefined) this.sent.sql.push(sql);
          parsed = undefined;
        } else if (message.type === 'Q' && message.sql !== undefined) this.sent.sql.push(message.sql);
        const rule = this.holdRule;
        if (!held && rule && message.sql !== undefined && rule.match.test(message.sql)) {
          this.holdRule = undefined;
          held = [];
          this.held.add({
            release: async () => {
              // The app gave up on this connection and closed it; the partition heals after that close.
              await clientClosed;
              for (const data of held!) server.write(data);
              server.end();
              await serverClosed;
            },
          });
          rule.arrived();
        }
      }
      if (held) held.push(chunk);
      else server.write(chunk);
    });
    const ended = () => {
      closed();
      if (!held) server.end();
    };
    client.on('end', ended);
    client.on('close', ended);
  }
}

const isClaim = (sql: string) => /^WITH gate AS/.test(sql);
const roundTrips = (sent: Sent) => sent.roundTrips;

describe.skipIf(skip)('generated PostgreSQL runtime: the hot paths cost what the document says', () => {
  let generated: Generated;
  let schema: Schema;
  let recorder: WireRecorder;
  let scaffold: Record<string, Loose>;
  let pool: Loose;
  let core: Loose;
  const fingerprint = 'a'.repeat(64);

  beforeAll(async () => {
    const model = await modelFor('express-stripe-payments', (raw) => {
      raw.actions = [
        { name: 'addNote', trigger: 'http', route: 'POST /notes', significantFields: ['text'], scope: 'user', expectedDurationMs: 100 },
        { name: 'sendReceipt', trigger: 'http', route: 'POST /receipts', significantFields: ['orderId'], scope: 'user', mode: 'lease', expectedDurationMs: 100 },
      ];
    });
    generated = await generateAndCompile(model, 'hot-paths');
    expect(generated.tscOutput).toBe('');
    schema = await createSchema(generated, 'hot_paths');
    await schema.pool.query('CREATE TABLE notes (scope text NOT NULL, key text NOT NULL)');
    scaffold = await loadScaffold(generated);
    recorder = await WireRecorder.start();
    // One connection, so "prepared once per connection" is observable; the design's limits as session parameters.
    pool = scaffold.createPool(recorder.url(schema), { acquireTimeoutMs: 2_000, statementTimeoutMs: 500, lockTimeoutMs: 250 }, 1);
    const store = new scaffold.PgIdempotencyStore({ pool, table: scaffold.POLICY.table, stepTable: scaffold.POLICY.stepTable, timeoutMs: 500, acquireTimeoutMs: 2_000, lockTimeoutMs: 250 });
    core = new scaffold.IdempotencyCore(store, { ...scaffold.POLICY, inFlight: 'reject' });
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
    await recorder?.close();
    await schema?.drop();
    if (generated) await rm(generated.dir, { recursive: true, force: true });
  });

  const addNote = (key: string) =>
    core.runOnce(scaffold.ACTIONS.addNote, { scope: 'user-1', key, fingerprint }, async (_signal: AbortSignal, context: Loose) => {
      await context.db.query('INSERT INTO notes (scope, key) VALUES ($1, $2)', [context.scope, context.key]);
      return { saved: context.key };
    });

  it('transactional first request: one read, BEGIN with the claim, the handler write, the completion with a single COMMIT: four round trips', async () => {
    await addNote('warm-up');
    recorder.take();
    const first = await addNote('note-1');
    expect(first).toEqual({ result: { saved: 'note-1' }, replayed: false });
    const sent = recorder.take();
    expect(sent.sql.map((sql) => (isClaim(sql) ? 'claim' : sql.split(/\s+/).slice(0, 2).join(' ')))).toEqual([
      'SELECT status,',
      'BEGIN',
      'claim',
      'INSERT INTO',
      'WITH done',
      'COMMIT',
    ]);
    // BEGIN goes out with the claim and COMMIT with the completion, each pair in one write.
    expect(roundTrips(sent)).toBe(4);
    // The store's named statements were parsed on the connection's first use (the warm-up) and are only bound since;
    // the one Parse left is the handler's own unnamed INSERT.
    expect(sent.types.filter((type) => type === 'P')).toHaveLength(1);
    const { rows } = await schema.pool.query("SELECT count(*)::int AS n FROM notes WHERE key = 'note-1'");
    expect(rows[0].n).toBe(1);
  });

  it('replay of a completed record: one plain SELECT in autocommit, no lock, no write, no transaction', async () => {
    const replay = await addNote('note-1');
    expect(replay).toEqual({ result: { saved: 'note-1' }, replayed: true });
    const sent = recorder.take();
    expect(sent.sql).toHaveLength(1);
    expect(sent.sql[0]).toMatch(/^SELECT /);
    expect(sent.sql[0]).not.toMatch(/FOR (UPDATE|SHARE|NO KEY)|INSERT|UPDATE |DELETE/i);
    expect(roundTrips(sent)).toBe(1);
    const { rows } = await schema.pool.query("SELECT count(*)::int AS n FROM notes WHERE key = 'note-1'");
    expect(rows[0].n).toBe(1);
  });

  const sendReceipt = (key: string, print = fingerprint) =>
    core.runOnce(scaffold.ACTIONS.sendReceipt, { scope: 'user-1', key, fingerprint: print }, async () => ({ sent: key }));
  /** xmax names the last transaction that wrote or locked the row version: unchanged means no lock was taken. */
  const rowVersion = async (key: string) =>
    (await schema.pool.query('SELECT xmin::text, xmax::text FROM idempotency_store WHERE key = $1', [key])).rows[0];

  it('lease first request: the claim is the only statement before the action (one autocommit round trip, no read before it), then the completion', async () => {
    await sendReceipt('receipt-warm-up');
    recorder.take();
    expect(await sendReceipt('receipt-1')).toEqual({ result: { sent: 'receipt-1' }, replayed: false });
    const sent = recorder.take();
    expect(sent.sql.map((sql) => (isClaim(sql) ? 'claim' : sql.split(/\s+/)[0]))).toEqual(['claim', 'UPDATE']);
    expect(roundTrips(sent)).toBe(2);
  });

  it('lease replay of a completed record: one statement, one round trip, and the row is neither locked nor written', async () => {
    const before = await rowVersion('receipt-1');
    expect(await sendReceipt('receipt-1')).toEqual({ result: { sent: 'receipt-1' }, replayed: true });
    const sent = recorder.take();
    expect(sent.sql).toHaveLength(1);
    expect(roundTrips(sent)).toBe(1);
    expect(await rowVersion('receipt-1')).toEqual(before);
  });

  it('lease in-flight duplicate and fingerprint mismatch: answered by the same single statement, without a lock', async () => {
    const store = core.store;
    const input = { scope: 'user-1', key: 'in-flight-1', action: 'sendReceipt', fingerprint, algorithm: scaffold.POLICY.fingerprintAlgorithm, leaseMs: 60_000, retentionMs: 3_600_000 };
    const owner = await store.claim(input);
    expect(owner.outcome).toBe('claimed');
    const before = await rowVersion('in-flight-1');
    recorder.take();
    const duplicate = await store.claim(input);
    expect(duplicate).toMatchObject({ outcome: 'existing', record: { status: 'PROCESSING', leaseLive: true } });
    await expect(sendReceipt('in-flight-1')).rejects.toMatchObject({ name: 'InFlightError' });
    await expect(sendReceipt('receipt-1', 'b'.repeat(64))).rejects.toMatchObject({ name: 'MismatchError' });
    const sent = recorder.take();
    expect(sent.sql.every(isClaim)).toBe(true);
    expect(roundTrips(sent)).toBe(3);
    expect(await rowVersion('in-flight-1')).toEqual(before);
  });

  it('a lease claim the network holds until after the client answered 503 takes nothing when it is finally delivered', async () => {
    const input = { scope: 'user-1', key: 'held-claim', action: 'sendReceipt', fingerprint, algorithm: scaffold.POLICY.fingerprintAlgorithm, leaseMs: 60_000, retentionMs: 3_600_000 };
    const store = core.store;
    const arrived = recorder.holdOn(/^WITH gate AS/);
    const attempt = store.claim(input).then(
      () => 'claimed',
      (error: Error) => error.name,
    );
    await arrived;
    // The client gives up after the statement budget plus its grace, and says "not processed".
    expect(await attempt).toBe('StoreUnavailableError');
    await recorder.release();
    const { rows } = await schema.pool.query("SELECT status FROM idempotency_store WHERE key = 'held-claim'");
    expect(rows, 'the claim arrived after its sender answered 503, yet it took the key').toEqual([]);
    expect((await store.claim(input)).outcome).toBe('claimed');
  }, 30_000);

  it('clock skew: a step of the app clock (either way, by an hour) never fails a claim, never takes a held claim late, and leases follow the database clock', async () => {
    const store = core.store;
    const input = (key: string) => ({ scope: 'user-1', key, action: 'sendReceipt', fingerprint, algorithm: scaffold.POLICY.fingerprintAlgorithm, leaseMs: 60_000, retentionMs: 3_600_000 });
    // The store has already read the database clock (earlier tests); now this machine's wall clock jumps.
    const realNow = Date.now;
    try {
      for (const skewMs of [3_600_000, -3_600_000]) {
        Date.now = () => realNow() + skewMs;
        const key = `skew-${skewMs > 0 ? 'ahead' : 'behind'}`;
        expect(await sendReceipt(key)).toEqual({ result: { sent: key }, replayed: false });
        expect(await sendReceipt(key)).toEqual({ result: { sent: key }, replayed: true });
        const owner = await store.claim(input(`${key}-lease`));
        expect(owner.outcome).toBe('claimed');
        expect(await store.claim(input(`${key}-lease`))).toMatchObject({ outcome: 'existing', record: { leaseLive: true } });
        // The lease lapses on the database clock (set there, not waited for): the duplicate takes over with a new token.
        await schema.pool.query("UPDATE idempotency_store SET locked_until = now() - interval '1 second' WHERE key = $1", [`${key}-lease`]);
        const takeover = await store.claim(input(`${key}-lease`));
        expect(takeover).toMatchObject({ outcome: 'claimed', reclaimed: 'orphan', attempt: 2 });
        expect(takeover.ref.token).not.toBe(owner.ref.token);
        expect(await store.complete(owner.ref, 'COMPLETED', { status: 200, headers: {}, body: Buffer.from('late') }, 60_000)).toBe(false);
      }
      // Ahead is the direction that would stretch a deadline: a claim held past it must still take nothing.
      Date.now = () => realNow() + 3_600_000;
      const arrived = recorder.holdOn(/^WITH gate AS/);
      const attempt = store.claim(input('skew-held')).then(
        () => 'claimed',
        (error: Error) => error.name,
      );
      await arrived;
      expect(await attempt).toBe('StoreUnavailableError');
      await recorder.release();
      const { rows } = await schema.pool.query("SELECT status FROM idempotency_store WHERE key = 'skew-held'");
      expect(rows).toEqual([]);
    } finally {
      Date.now = realNow;
    }
  }, 60_000);
});
