import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runGenerate } from '../../src/cli/generate.js';
import { checkConstraints } from '../../src/model/constraints.js';
import { scaffoldFacts } from '../../src/model/scaffoldFacts.js';
import type { DesignModel } from '../../src/model/types.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { modelFor } from '../scaffold/generateInto.js';

/**
 * The "store DDL" constraint row says only what the generated store code does: PRIMARY KEY and CHECK constraints
 * where the store's DDL has them, and for Redis and DynamoDB, which have no DDL, what stands in for them.
 */
const storeRow = (model: DesignModel) => checkConstraints(model).find((check) => check.id === 'ddl-constraints')!;
const designOn = (database: string) => modelFor('express-stripe-payments', (raw) => ((raw.stack as Record<string, unknown>).database = database));
const codeOf = (model: DesignModel) => generateScaffold(model, { dir: 'src/idempotency' });

describe('the store DDL constraint', () => {
  it.each(['postgres', 'mysql', 'sqlite'])('on %s claims PRIMARY KEY and CHECK constraints, and the generated DDL has both', async (database) => {
    const model = await designOn(database);
    const row = storeRow(model);
    expect(row).toMatchObject({ statement: 'The store DDL has PRIMARY KEY and CHECK constraints', satisfied: true });
    expect(row.evidence).toBe(`${model.storage.table} has PRIMARY KEY (scope, key) and CHECK constraints on status and on the lease.`);
    const ddl = codeOf(model).find((file) => file.role === 'ddl' && file.path.endsWith('.sql'))!.contents.replace(/--.*$/gm, '');
    expect(ddl).toMatch(/PRIMARY KEY \(scope, [`"]?key[`"]?\)/);
    expect(ddl).toMatch(/CHECK \(status IN \('PROCESSING', 'COMPLETED', 'FAILED'\)\)/);
    expect(ddl).toMatch(/CHECK \(\(status = 'PROCESSING'\) = \(locked_until IS NOT NULL\)\)/);
  });

  it.each([
    ['redis', 'redisStore.ts', ['EVALSHA', "redis.call('HMGET', KEYS[1], 'token'"]],
    ['dynamodb', 'dynamoStore.ts', ['attribute_not_exists(pk)', '#token = :token']],
  ])('on %s claims no PRIMARY KEY or CHECK constraint, and names what its store code does instead', async (database, storeFile, names) => {
    const model = await designOn(database);
    const row = storeRow(model);
    expect(row.satisfied).toBe(true);
    const said = `${row.statement} ${row.evidence}`;
    expect(said).not.toMatch(/has PRIMARY KEY|CHECK constraints on/);
    expect(row.evidence).toMatch(/no (DDL|PRIMARY KEY|CHECK)/);
    expect(row.evidence).toContain('fencing token');
    const files = codeOf(model);
    // No file the scaffold writes for this store declares a table with constraints...
    expect(files.filter((file) => /CREATE TABLE|PRIMARY KEY \(/i.test(file.contents)).map((file) => file.path)).toEqual([]);
    // ...and the uniqueness and fencing the row names are in its store module.
    const store = files.find((file) => file.path.endsWith(`/${storeFile}`))!.contents;
    for (const name of names) expect(store).toContain(name);
    if (database === 'dynamodb') expect(row.evidence).toContain('attribute_not_exists(pk)');
  });

  it('is the reference PostgreSQL store’s once the scaffold falls back to it', async () => {
    const model = await designOn('redis');
    model.scaffold = scaffoldFacts('src/idempotency', [], true, 'Express + PostgreSQL');
    expect(storeRow(model).statement).toBe('The store DDL has PRIMARY KEY and CHECK constraints');
  });
});

describe('the document generated for a Redis design', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it('shows the Redis wording in its constraint table, not a DDL it does not have', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'wt_nestfault_constraints_'));
    roots.push(root);
    const config = JSON.parse(await readFile(path.join(import.meta.dirname, '../../fixtures/configs/express-stripe-payments.json'), 'utf8')) as Record<string, unknown>;
    Object.assign(config, { format: 'md', output: 'docs/idempotency-design.md', split: 'never', scaffold: false });
    (config['stack'] as Record<string, unknown>)['database'] = 'redis';
    await writeFile(path.join(root, 'idempotency.config.json'), JSON.stringify(config));
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'api', private: true }));
    await runGenerate({ cwd: root, quiet: true });
    const document = await readFile(path.join(root, 'docs/idempotency-design.md'), 'utf8');
    const row = document.split('\n').find((line) => line.includes('guards every state change'));
    expect(row).toContain('Redis has no DDL');
    expect(document).not.toContain('The store DDL has PRIMARY KEY and CHECK constraints');
  }, 120_000);
});
