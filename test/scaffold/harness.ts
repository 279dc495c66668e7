import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type express from 'express';
import pg from 'pg';
import { expect } from 'vitest';
import { ROOT, type Generated } from './generateInto.js';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Resolves to a skip reason when PostgreSQL cannot be reached, so suites say why they did not run. */
export async function postgresSkipReason(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    const reason = `PostgreSQL at ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')} is unreachable (${(error as Error).message}); start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`;
    // CI starts PostgreSQL itself (.ci/run): there a missing database is a failure, never a quiet skip.
    if (process.env.CI) throw new Error(`${reason}. CI must run these tests.`);
    return reason;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface Schema {
  name: string;
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** An empty throwaway schema (its own search_path in `url`), dropped with everything in it, so test files never share rows. */
export async function throwawaySchema(name: string, max: number): Promise<Schema> {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.end();
  const url = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${name}`)}`;
  const pool = new pg.Pool({ connectionString: url, max });
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await client.end();
    },
  };
}

/** A throwaway schema holding the generated migration. */
export async function createSchema(generated: Generated, label: string): Promise<Schema> {
  const schema = await throwawaySchema(`idem_${label}_${randomUUID().replace(/-/g, '').slice(0, 10)}`, 20);
  const migration = generated.files.find((file) => file.role === 'ddl')!;
  await schema.pool.query(await readFile(path.join(generated.dir, migration.path), 'utf8'));
  return schema;
}

/** The generated modules, loaded from the JavaScript tsc emitted. Typed loosely: the compile step checks the real types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;
export async function loadScaffold(generated: Generated): Promise<Record<string, Loose>> {
  return (await import(pathToFileURL(path.join(generated.outDir, 'index.js')).href)) as Record<string, Loose>;
}

export async function listen(app: ReturnType<typeof express>): Promise<{ url: string; close(): Promise<void> }> {
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface SuiteRun {
  /** Only these suites (vitest filters), relative to the folder; default every suite its vitest.config.mjs collects. */
  readonly files?: readonly string[];
  /** The servers the suites talk to; default DATABASE_URL, the PostgreSQL the other helpers here use. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Runs the generated vitest suites in their folder (this repository's vitest, the folder's vitest.config.mjs) and
 * resolves to the verbose output once at least one test passed and none failed; a failing run throws with its
 * output. What a caller checks beyond that (nothing skipped, a count) stays with the caller.
 */
export async function runGeneratedSuite(dir: string, options: SuiteRun = {}): Promise<string> {
  const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs', '--root', '.', '--reporter', 'verbose', ...(options.files ?? [])], {
    cwd: dir,
    env: { ...process.env, ...(options.env ?? { DATABASE_URL }), CI: '1', NO_COLOR: '1' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`generated suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  expect(stdout).toMatch(/Tests\s+\d+ passed/);
  expect(stdout).not.toMatch(/\d+ failed/);
  return stdout;
}
