import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/config/schema.js';
import { verifyPath } from '../../src/verify/index.js';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

/**
 * Issue #15: a worker-only design (every action a queue consumer or a cron job) says only what is true of its own
 * store, in the document and in the scaffold's README: its runbook, build order, cleanup and anti-pattern lines name
 * that store's commands and settings, never another one's (no psql or autovacuum outside PostgreSQL, no Redis
 * expiry outside Redis, no SQL at all where the store has none).
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** What only a document about that store may say. MySQL and MariaDB share one store, and its label names both. */
const OWN: Record<'postgres' | 'mysql' | 'sqlite' | 'redis' | 'dynamodb', readonly RegExp[]> = {
  postgres: [/\bpsql\b/, /\bpg_stat/, /\bautovacuum\b/, /\bstatement_timeout\b/, /ON CONFLICT/, /\bPostgreSQL\b/],
  mysql: [/\bInnoDB\b/, /\binnodb_/, /OPTIMIZE TABLE/, /ON DUPLICATE KEY/, /\bUTC_TIMESTAMP\b/, /\bMySQL\b/, /\bMariaDB\b/],
  sqlite: [/\bSQLite\b/, /BEGIN IMMEDIATE/, /\bjulianday\b/],
  redis: [/\bRedis\b/, /\bmaxmemory/, /\bP?EXPIRE\b/, /\bEVALSHA\b/],
  dynamodb: [/\bDynamoDB\b/, /\bPutItem\b/, /\bUpdateItem\b/, /attribute_not_exists/],
};

/** SQL, and the columns and cleanup job of the SQL stores: nothing a store without tables or statements has. */
const RELATIONAL: readonly RegExp[] = [
  /DELETE FROM/,
  /\bSELECT\b/,
  /\bVACUUM\b/,
  /CREATE TABLE/,
  /\blocked_until\b/,
  /\bfencing_token\b/,
  /\bexpires_at\b/,
  /Run the migration/,
  /cleanup job (runs|deletes)/,
  /Schedule the cleanup job/,
  /\bcolumns?\b/,
];

const family = (database: Database): keyof typeof OWN => (database === 'mariadb' ? 'mysql' : (database as keyof typeof OWN));

/** The notification worker (one consumer, one cron job, no payments) on the given store, with its scaffold. */
function workerOn(database: Database): Record<string, unknown> {
  const raw = structuredClone(rawFixture('worker-cron-no-payments'));
  (raw.stack as Record<string, unknown>).database = database;
  raw.scaffold = { dir: 'src/idempotency' };
  return raw;
}

const STORES: readonly Database[] = ['postgres', 'mysql', 'mariadb', 'sqlite', 'redis', 'dynamodb'];

describe.each(STORES)('a worker-only design on %s', (database) => {
  it('names no other store’s commands, settings or cleanup, in the document or the scaffold README', { timeout: 120_000 }, async () => {
    const result = await renderConfig(workerOn(database), { format: 'md', write: true });
    dirs.push(result.dir);
    expect(result.model.stack.worker).toBe(true);
    const readme = result.plan.find((item) => item.path === 'src/idempotency/README.md');
    expect(readme, 'the scaffold README').toBeDefined();

    const own = family(database);
    const foreign = Object.entries(OWN).filter(([store]) => store !== own).flatMap(([, marks]) => marks);
    if (own === 'redis' || own === 'dynamodb') foreign.push(...RELATIONAL);
    for (const [name, text] of [['document', result.text], ['README.md', readme!.contents]] as const) {
      for (const mark of foreign) {
        const line = text.split('\n').find((candidate) => mark.test(candidate));
        expect(line, `the ${database} ${name} says ${mark.source}`).toBeUndefined();
      }
    }
    // The store's own words are there: the runbook and the cleanup speak of it.
    expect(result.text).toMatch(OWN[own][0]!);
    // TRIGGERS.md names the store by its name and no HTTP middleware a worker does not have.
    const triggers = result.plan.find((item) => item.path === 'src/idempotency/TRIGGERS.md')!.contents;
    expect(triggers).not.toMatch(/HTTP middleware/);
    if (database !== 'postgres') expect(triggers).toContain(`## Tests on ${result.model.stack.databaseLabel.replace(/^MySQL$|^MariaDB$/, 'MySQL/MariaDB')}`);
    expect(await verifyPath(path.join(result.dir, result.document))).toEqual([]);
  });
});
