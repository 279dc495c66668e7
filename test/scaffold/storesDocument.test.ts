import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { ROOT } from './generateInto.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The document of a design on each new store embeds that store's generated files, and still verifies. */
describe.each([
  { database: 'mysql', store: 'mysqlStore.ts', ddl: 'ENGINE = InnoDB' },
  { database: 'mariadb', store: 'mysqlStore.ts', ddl: 'ENGINE = InnoDB' },
  { database: 'sqlite', store: 'sqliteStore.ts', ddl: ') STRICT;' },
  { database: 'redis', store: 'redisStore.ts', ddl: undefined },
  { database: 'dynamodb', store: 'dynamoStore.ts', ddl: 'attribute_not_exists(pk)' },
])('generate on $database', ({ database, store, ddl }) => {
  it('writes the store scaffold, embeds its DDL in the document and verifies', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), `idem-doc-${database}-`));
    dirs.push(dir);
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as Record<string, unknown>;
    (config.stack as Record<string, unknown>).database = database;
    // One action whose effects stay in the database: transactional where the store allows it.
    (config.actions as Array<Record<string, unknown>>).push({ name: 'createNote', trigger: 'http', route: 'POST /notes', significantFields: ['text'] });
    config.format = 'md';
    config.output = 'docs/idempotency-design.md';
    delete config.$schema;
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config));
    const result = await generate({ cwd: dir, date: '2026-01-15' });
    expect(result.warnings.join('\n')).not.toContain('No runnable scaffolding');
    const scaffoldDir = (config.scaffold as { dir: string }).dir;
    expect(result.plan.map((entry) => entry.path)).toContain(`${scaffoldDir}/${store}`);
    const document = await readFile(path.join(dir, 'docs/idempotency-design.md'), 'utf8');
    if (ddl) expect(document).toContain(ddl);
    expect(document).toContain(`${scaffoldDir}/express.ts`);
    // What the document says a transactional handler gets is what this store's code gives it.
    expect(document).not.toContain('node-postgres');
    if (database === 'redis' || database === 'dynamodb') expect(document).not.toMatch(/Transactional \(/);
    else expect(document).toMatch(/Transactional \(/);
  });
});
