import { randomUUID } from 'node:crypto';
import type { AddressInfo, Server } from 'node:net';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A throwaway name for one test file's database, schema or key prefix. */
export const throwaway = (label: string) => `idem_${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;

/** Skip locally with the reason when the server is away; in CI (which starts it) that is a failure. */
async function skipReason(service: string, probe: () => Promise<void>, start: string): Promise<string | undefined> {
  try {
    await probe();
    return undefined;
  } catch (error) {
    const reason = `${service} is unreachable (${(error as Error).message}); start it with: ${start}`;
    if (process.env.CI) throw new Error(`${reason}. CI must run these tests.`);
    return reason;
  }
}

export function mysqlSkipReason(): Promise<string | undefined> {
  return skipReason(
    `MySQL/MariaDB at ${MYSQL_URL.replace(/\/\/[^@]*@/, '//')}`,
    async () => {
      const connection = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 2_000 });
      await connection.query('SELECT 1');
      await connection.end();
    },
    'start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd',
  );
}

export function redisSkipReason(): Promise<string | undefined> {
  return skipReason(
    `Redis at ${REDIS_URL}`,
    async () => {
      const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
    },
    'redis-server --daemonize yes --bind 127.0.0.1 --port 6379',
  );
}

/** A MySQL database of its own holding the given migration; dropped by drop(). */
export async function createMysqlDatabase(label: string, migration: string) {
  const name = throwaway(label);
  const admin = await mysql.createConnection({ uri: MYSQL_URL, multipleStatements: true });
  await admin.query(`CREATE DATABASE \`${name}\``);
  await admin.query(`USE \`${name}\`; ${migration}`);
  await admin.end();
  const url = new URL(MYSQL_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const connection = await mysql.createConnection({ uri: MYSQL_URL });
      await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await connection.end();
    },
  };
}

/**
 * A DynamoDB-compatible server (dynalite, in memory) started in this process on a free loopback port: the DynamoDB
 * store's suites need no service of their own. `close()` stops it.
 */
export async function startDynalite(): Promise<{ endpoint: string; close(): Promise<void> }> {
  // dynalite ships no types: a function of its options returning an http.Server.
  const { default: dynalite } = (await import('dynalite' as string)) as { default: (options: Record<string, number>) => Server };
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server & { keepAliveTimeout: number };
  // Node closes an idle keep-alive socket after 5 s; a request the SDK sends on it just then is reset. The store makes
  // one attempt per call (it fails closed), so keep sockets open for the length of a suite.
  server.keepAliveTimeout = 600_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
