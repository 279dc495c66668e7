import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import type pg from 'pg';
import type { DesignModel } from '../../src/model/types.js';
import type { Generated } from '../scaffold/generateInto.js';
import { createSchema, DATABASE_URL, loadScaffold, postgresSkipReason, throwawaySchema, type Schema } from '../scaffold/harness.js';
import { createMysqlDatabase, mysqlSkipReason, REDIS_URL, redisSkipReason, startDynalite } from '../scaffold/storeContract/services.js';
import { dynamoWire, mysqlWire, postgresWire, redisWire, type Wire } from './wire.js';

/** The stores the fault suite runs on (stack.database of the design). */
export type StoreKind = 'postgres' | 'mysql' | 'redis' | 'dynamodb' | 'sqlite';

export const STORE_LABELS: Record<StoreKind, string> = {
  postgres: 'PostgreSQL',
  mysql: 'MySQL/MariaDB',
  redis: 'Redis',
  dynamodb: 'DynamoDB (dynalite)',
  sqlite: 'SQLite',
};

/** A stored record as the scenarios read it, whatever the store. */
export interface StoredRecord {
  readonly status: string;
  readonly token: string;
  readonly responseStatus: number | null;
  readonly body: string | null;
}

/**
 * One store under the suite: a throwaway database / key prefix / table / file of its own, the way the app reaches it
 * (through the fault proxy when the store is on the network), and the test's direct view of its records.
 */
export interface StoreBackend {
  readonly kind: StoreKind;
  /** Where the fault proxy forwards to, and how it reads the protocol; undefined for an embedded store. */
  readonly network?: { readonly host: string; readonly port: number; readonly wire: Wire };
  /** The connection string the app's createPool takes, straight to the store. */
  readonly url: string;
  /** The claim's write and the completion's write, as the proxy sees them. */
  readonly claim: RegExp;
  readonly completion: RegExp;
  /** PostgreSQL's fencing token is a growing number; the others are random tokens, only ever compared for equality. */
  readonly tokensIncrease: boolean;
  /**
   * The store gives back (releases, fenced by its token) a claim whose answer it never got, so a retry is not held
   * off for a lease: Redis and DynamoDB do; the SQL stores roll back or keep the lease.
   */
  readonly releasesLostClaims: boolean;
  record(key: string): Promise<StoredRecord | undefined>;
  /** Makes the key's lease lapse now, exactly as the passing of its whole duration would (the record stays PROCESSING). */
  expireLease(key: string): Promise<void>;
  drop(): Promise<void>;
}

/** Executions and effects are counted in PostgreSQL over a direct connection, whatever the store under test. */
export interface Recorder {
  readonly url: string;
  readonly pool: pg.Pool;
  drop(): Promise<void>;
}

const RECORDER_TABLES = `CREATE TABLE fault_executions (id bigserial PRIMARY KEY, key text NOT NULL, scope text NOT NULL,
    provider_key text NOT NULL, worker int NOT NULL);
  CREATE TABLE fault_effects (id bigserial PRIMARY KEY, key text NOT NULL, worker int NOT NULL)`;

const unique = (label: string) => `idem_fault_${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;

/** Why the suite cannot run on this store here (its server, or the recorder's PostgreSQL, is away). */
export async function storeSkipReason(kind: StoreKind): Promise<string | undefined> {
  const recorder = await postgresSkipReason();
  if (recorder) return kind === 'postgres' ? recorder : `the recorder's ${recorder}`;
  if (kind === 'mysql') return mysqlSkipReason();
  if (kind === 'redis') return redisSkipReason();
  return undefined;
}

/** Before generation: stores without a database of their own get a throwaway table name (their key prefix / table). */
export function patchModel(kind: StoreKind, model: DesignModel): void {
  if (kind === 'redis' || kind === 'dynamodb') model.storage.table = unique(kind);
}

/** A PostgreSQL schema with the recorder's tables (for PostgreSQL, the store's own schema holds them too). */
export async function createRecorder(label: string, schema?: Schema): Promise<Recorder> {
  if (schema) {
    await schema.pool.query(RECORDER_TABLES);
    return { url: schema.url, pool: schema.pool, drop: async () => undefined };
  }
  const own = await throwawaySchema(unique(`rec_${label}`), 10);
  await own.pool.query(RECORDER_TABLES);
  return own;
}

const hostPort = (url: string, port: number) => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || port) };
};

const migrationOf = (generated: Generated) => generated.files.find((file) => file.role === 'ddl')?.contents ?? '';

/** The store's backend for a generated scaffold: creates its throwaway database, prefix, table or file. */
export async function createBackend(kind: StoreKind, generated: Generated, model: DesignModel, label: string): Promise<{ backend: StoreBackend; schema?: Schema }> {
  const table = model.storage.table;
  switch (kind) {
    case 'postgres': {
      const schema = await createSchema(generated, label);
      return {
        schema,
        backend: {
          kind,
          network: { ...hostPort(DATABASE_URL, 5432), wire: postgresWire },
          url: schema.url,
          claim: /\bINSERT INTO\s+"?idempotency_store"?/i,
          completion: /\bUPDATE\s+"?idempotency_store"?\s+SET\s+status\b/i,
          tokensIncrease: true,
          releasesLostClaims: false,
          async record(key) {
            const { rows } = await schema.pool.query(
              `SELECT status, fencing_token::text AS token, response_status AS "responseStatus", convert_from(response_body, 'UTF8') AS body
               FROM idempotency_store WHERE key = $1`,
              [key],
            );
            return rows[0] as StoredRecord | undefined;
          },
          async expireLease(key) {
            const { rowCount } = await schema.pool.query(
              "UPDATE idempotency_store SET locked_until = now() - interval '1 millisecond' WHERE key = $1 AND status = 'PROCESSING'",
              [key],
            );
            if (rowCount !== 1) throw new Error(`no PROCESSING record to expire for ${key}`);
          },
          drop: () => schema.drop(),
        },
      };
    }
    case 'mysql': {
      const database = await createMysqlDatabase(`idem_fault_${label}`, migrationOf(generated));
      const pool = mysql.createPool({ uri: database.url, connectionLimit: 4 });
      return {
        backend: {
          kind,
          network: { ...hostPort(database.url, 3306), wire: mysqlWire },
          url: database.url,
          claim: /\bINSERT INTO\s+`?idempotency_store`?/i,
          completion: /\bUPDATE\s+`?idempotency_store`?\s+SET\s+status\b/i,
          tokensIncrease: false,
          releasesLostClaims: false,
          async record(key) {
            const [rows] = await pool.query<mysql.RowDataPacket[]>(
              `SELECT status, fencing_token AS token, response_status AS responseStatus, CONVERT(response_body USING utf8mb4) AS body
               FROM ${table} WHERE \`key\` = ?`,
              [key],
            );
            return rows[0] as StoredRecord | undefined;
          },
          async expireLease(key) {
            // On the server clock, as the store reads it (UTC_TIMESTAMP).
            const [header] = await pool.query<mysql.ResultSetHeader>(
              `UPDATE ${table} SET locked_until = UTC_TIMESTAMP(3) - INTERVAL 1000 MICROSECOND WHERE \`key\` = ? AND status = 'PROCESSING'`,
              [key],
            );
            if (header.affectedRows !== 1) throw new Error(`no PROCESSING record to expire for ${key}`);
          },
          async drop() {
            await pool.end();
            await database.drop();
          },
        },
      };
    }
    case 'redis': {
      const client = new Redis(REDIS_URL, { lazyConnect: true });
      await client.connect();
      // A server that has these scripts cached only ever sees EVALSHA: the proxy learns the texts up front.
      const source = await readFile(path.join(generated.dir, 'src/idempotency/redisStore.ts'), 'utf8');
      const scripts = new Map<string, string>();
      for (const match of source.matchAll(/^const [A-Z_]+ = `([\s\S]*?)`;$/gm)) {
        scripts.set(createHash('sha1').update(match[1]!).digest('hex'), match[1]!);
      }
      const recordKeyOf = async (key: string) => {
        const found: string[] = [];
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${table}:{*:${key}}`, 'COUNT', 1000);
          cursor = next;
          found.push(...keys);
        } while (cursor !== '0');
        if (found.length > 1) throw new Error(`more than one record for ${key}: ${found.join(', ')}`);
        return found[0];
      };
      return {
        backend: {
          kind,
          network: { ...hostPort(REDIS_URL, 6379), wire: redisWire(scripts) },
          url: REDIS_URL,
          claim: /^EVAL [\s\S]*'status', 'PROCESSING', 'token', ARGV\[1\]/,
          completion: /^EVAL [\s\S]*'completed', '1'/,
          tokensIncrease: false,
          releasesLostClaims: true,
          async record(key) {
            const name = await recordKeyOf(key);
            if (!name) return undefined;
            const hash = await client.hgetallBuffer(name);
            const text = (field: string) => (hash[field] === undefined ? null : hash[field]!.toString('utf8'));
            return {
              status: text('status')!,
              token: text('token')!,
              responseStatus: text('resp_status') === null ? null : Number(text('resp_status')),
              body: text('resp_body'),
            };
          },
          async expireLease(key) {
            // The lease is a key with a PX expiry: its expiry is exactly this deletion. (Already gone: the store
            // released it, which is the same state.)
            const name = await recordKeyOf(key);
            const processing = name !== undefined && (await client.hget(name, 'status')) === 'PROCESSING';
            if (!processing) throw new Error(`no PROCESSING record to expire for ${key}`);
            await client.del(`${name}:lease`);
          },
          async drop() {
            let cursor = '0';
            do {
              const [next, keys] = await client.scan(cursor, 'MATCH', `${table}:*`, 'COUNT', 1000);
              cursor = next;
              if (keys.length > 0) await client.del(...keys);
            } while (cursor !== '0');
            client.disconnect();
          },
        },
      };
    }
    case 'dynamodb': {
      const server = await startDynalite();
      const scaffold = await loadScaffold(generated);
      const { client } = scaffold.createPool(server.endpoint, { table, acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 }) as {
        client: { send(command: unknown): Promise<Record<string, unknown>>; destroy(): void };
      };
      await scaffold.ensureTable(client, table);
      const { ScanCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
      const item = async (key: string) => {
        const { Items } = (await client.send(new ScanCommand({ TableName: table }))) as { Items?: Array<Record<string, unknown>> };
        const mine = (Items ?? []).filter((candidate) => (JSON.parse(String(candidate.pk)) as string[])[1] === key);
        if (mine.length > 1) throw new Error(`more than one record for ${key}`);
        return mine[0];
      };
      return {
        backend: {
          kind,
          network: { ...hostPort(server.endpoint, 80), wire: dynamoWire },
          url: server.endpoint,
          claim: /^DynamoDB_20120810\.PutItem /,
          completion: /^DynamoDB_20120810\.UpdateItem [\s\S]*completed = :yes/,
          tokensIncrease: false,
          releasesLostClaims: true,
          async record(key) {
            const found = await item(key);
            if (!found) return undefined;
            const body = found.respBody as Uint8Array | undefined;
            return {
              status: String(found.status),
              token: String(found.token),
              responseStatus: found.respStatus === undefined ? null : Number(found.respStatus),
              body: body === undefined ? (found.completed ? '' : null) : Buffer.from(body).toString('utf8'),
            };
          },
          async expireLease(key) {
            // DynamoDB leases are measured by the application servers' clock (this machine's): one that ended now.
            const found = await item(key);
            if (found?.status !== 'PROCESSING') throw new Error(`no PROCESSING record to expire for ${key}`);
            await client.send(
              new UpdateCommand({
                TableName: table,
                Key: { pk: found.pk },
                UpdateExpression: 'SET leaseUntil = :past',
                ConditionExpression: '#status = :processing AND #token = :token',
                ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
                ExpressionAttributeValues: { ':past': Date.now() - 1, ':processing': 'PROCESSING', ':token': found.token },
              }),
            );
          },
          async drop() {
            client.destroy();
            await server.close();
          },
        },
      };
    }
    case 'sqlite': {
      const dir = path.join(os.tmpdir(), unique('sqlite'));
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, 'store.db');
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      db.exec(migrationOf(generated));
      const NOW_MS = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;
      return {
        backend: {
          kind,
          url: `sqlite:${file}`,
          claim: /\bINSERT INTO\b/i,
          completion: /\bUPDATE\b/i,
          tokensIncrease: false,
          releasesLostClaims: false,
          async record(key) {
            const row = db
              .prepare(`SELECT status, CAST(fencing_token AS TEXT) AS token, response_status AS responseStatus, CAST(response_body AS TEXT) AS body FROM ${table} WHERE key = ?`)
              .get(key);
            return row as StoredRecord | undefined;
          },
          async expireLease(key) {
            // On the clock the store reads (SQLite's own julianday('now')).
            const { changes } = db.prepare(`UPDATE ${table} SET locked_until = ${NOW_MS} - 1 WHERE key = ? AND status = 'PROCESSING'`).run(key);
            if (changes !== 1) throw new Error(`no PROCESSING record to expire for ${key}`);
          },
          async drop() {
            db.close();
            await rm(dir, { recursive: true, force: true });
          },
        },
      };
    }
  }
}
