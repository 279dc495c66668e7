import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, postgresSkipReason } from '../scaffold/harness.js';
import { FaultProxy } from './faultProxy.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`fault proxy tests skipped: ${skip}`);

/** The proxy's faults are themselves evidence, so each one is checked against what PostgreSQL actually saw. */
describe.skipIf(skip !== undefined)('the fault proxy between a pg client and PostgreSQL', () => {
  const table = `fault_proxy_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  let proxy: FaultProxy;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (label text PRIMARY KEY)`);
    const target = new URL(DATABASE_URL);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  });

  afterAll(async () => {
    await proxy?.close();
    await admin?.query(`DROP TABLE IF EXISTS ${table}`);
    await admin?.end();
  });

  const connect = async () => {
    const client = new pg.Client({ connectionString: proxy.urlFor(DATABASE_URL) });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  const labels = async () => (await admin.query<{ label: string }>(`SELECT label FROM ${table} ORDER BY label`)).rows.map((row) => row.label);
  const insert = (client: pg.Client, label: string, name?: string) =>
    client.query({ ...(name ? { name } : {}), text: `INSERT INTO ${table} (label) VALUES ($1)`, values: [label] });

  it('passes simple and extended-protocol traffic through unchanged', async () => {
    const client = await connect();
    expect((await client.query('SELECT 1 + 1 AS two')).rows).toEqual([{ two: 2 }]);
    await insert(client, 'passed', 'named_insert');
    await insert(client, 'passed-again', 'named_insert'); // second run: Bind by name only, no Parse
    await client.end();
    expect(await labels()).toEqual(['passed', 'passed-again']);
  });

  it('cuts before the server: the matching statement never runs, the client sees its connection die', async () => {
    const client = await connect();
    await insert(client, 'warm-up', 'cut_insert');
    const cut = proxy.cutOn((sql) => sql.includes(`INSERT INTO ${table}`), 'before-server');
    // Recognised through the statement name alone: pg sends the text only on the first execution.
    await expect(insert(client, 'never-arrives', 'cut_insert')).rejects.toThrow();
    expect(await cut.fired).toContain(`INSERT INTO ${table}`);
    expect(await labels()).not.toContain('never-arrives');
  });

  it('cuts after commit: the statement ran and committed, the client only sees an error', async () => {
    const client = await connect();
    const cut = proxy.cutOn((sql) => sql.includes(`INSERT INTO ${table}`), 'after-commit');
    await expect(insert(client, 'committed-unseen')).rejects.toThrow();
    await cut.fired;
    expect(await labels()).toContain('committed-unseen');
  });

  it('stalls without losing anything: held statements run once healed, even from a client that gave up and left', async () => {
    const client = await connect();
    proxy.stall();
    const held = insert(client, 'held');
    const gaveUp = held.then(
      () => 'answered',
      () => 'failed',
    );
    // The client abandons its connection while the network is partitioned.
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect(await gaveUp).toBe('failed');
    expect(await labels()).not.toContain('held');
    proxy.heal();
    await proxy.quiet();
    expect(await labels()).toContain('held');
  });

  it('refuses connections until healed, and delays without breaking anything', async () => {
    proxy.refuse();
    await expect(connect()).rejects.toThrow();
    proxy.heal();
    proxy.delay(5);
    try {
      const client = await connect();
      await insert(client, 'delayed');
      await client.end();
    } finally {
      proxy.delay(0);
    }
    expect(await labels()).toContain('delayed');
  });
});
