import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMysqlDatabase, MYSQL_URL, mysqlSkipReason, REDIS_URL, redisSkipReason, throwaway } from '../scaffold/storeContract/services.js';
import { FaultProxy } from './faultProxy.js';
import { mysqlWire, redisWire } from './wire.js';

/** The proxy's statement cuts on MySQL and Redis, checked against what the server actually kept. */
const mysqlSkip = await mysqlSkipReason();
if (mysqlSkip) console.warn(`fault proxy on MySQL skipped: ${mysqlSkip}`);
describe.skipIf(mysqlSkip !== undefined)('the fault proxy between mysql2 and MySQL/MariaDB', () => {
  let proxy: FaultProxy;
  let database: Awaited<ReturnType<typeof createMysqlDatabase>>;
  let admin: mysql.Connection;

  beforeAll(async () => {
    database = await createMysqlDatabase('idem_fault_proxy', 'CREATE TABLE labels (label varchar(64) PRIMARY KEY)');
    admin = await mysql.createConnection({ uri: database.url });
    const target = new URL(MYSQL_URL);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 3306) }, mysqlWire);
  });
  afterAll(async () => {
    await proxy?.close();
    await admin?.end();
    await database?.drop();
  });

  const connect = () => mysql.createConnection({ uri: proxy.urlFor(database.url) });
  const labels = async () => ((await admin.query<mysql.RowDataPacket[]>('SELECT label FROM labels ORDER BY label'))[0]).map((row) => row.label as string);

  it('passes queries and prepared statements through, and cuts before the server', async () => {
    const client = await connect();
    expect((await client.query<mysql.RowDataPacket[]>('SELECT 1 + 1 AS two'))[0]).toEqual([{ two: 2 }]);
    await client.execute('INSERT INTO labels (label) VALUES (?)', ['prepared']);
    const cut = proxy.cutOn(/INSERT INTO labels/, 'before-server');
    // Recognised through the prepared statement's id: COM_STMT_EXECUTE carries no text.
    await expect(client.execute('INSERT INTO labels (label) VALUES (?)', ['never-arrives'])).rejects.toThrow();
    expect(await cut.fired).toContain('INSERT INTO labels');
    expect(await labels()).toEqual(['prepared']);
  });

  it('cuts after the COMMIT that follows the statement: the row is kept, the client hears nothing', async () => {
    const client = await connect();
    const cut = proxy.cutOn(/INSERT INTO labels/, 'after-commit');
    await client.query('START TRANSACTION');
    await client.query("INSERT INTO labels (label) VALUES ('committed')");
    await expect(client.query('COMMIT')).rejects.toThrow();
    await cut.fired;
    expect(await labels()).toContain('committed');
  });
});

const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`fault proxy on Redis skipped: ${redisSkip}`);
describe.skipIf(redisSkip !== undefined)('the fault proxy between ioredis and Redis', () => {
  const prefix = throwaway('idem_fault_proxy');
  const script = "return redis.call('SET', KEYS[1], ARGV[1])";
  let proxy: FaultProxy;
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL);
    const target = new URL(REDIS_URL);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) }, redisWire());
  });
  afterAll(async () => {
    await proxy?.close();
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length > 0) await admin.del(...keys);
    admin?.disconnect();
  });

  const connect = () => {
    const client = new Redis(proxy.urlFor(REDIS_URL), { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    return client;
  };

  it('recognises a script by its text under EVALSHA, cuts before the server and after the reply', async () => {
    const client = connect();
    // EVAL first: the proxy learns the script's sha, so the EVALSHA that follows reads as the script.
    await client.eval(script, 1, `${prefix}:warm`, 'x');
    const before = proxy.cutOn((text) => text.startsWith('EVAL ') && text.includes("'SET'"), 'before-server');
    await expect(client.evalsha(createSha(script), 1, `${prefix}:lost`, 'x')).rejects.toThrow();
    await before.fired;
    expect(await admin.exists(`${prefix}:lost`)).toBe(0);
    client.disconnect();

    const again = connect();
    const after = proxy.cutOn(/^SET /, 'after-commit');
    await expect(again.set(`${prefix}:kept`, 'x')).rejects.toThrow();
    await after.fired;
    expect(await admin.get(`${prefix}:kept`)).toBe('x');
    again.disconnect();
    await proxy.quiet();
  });
});

function createSha(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
