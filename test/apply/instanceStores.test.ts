import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderInstance } from '../../src/apply/renderInstance.js';
import { renderNextInstance } from '../../src/apply/transforms/nextInstance.js';
import { runApply } from '../../src/cli/apply.js';
import { loadConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { compile, ROOT } from './fixtureApp.js';

/** fixtures/apply/<name> copied under .tmp with its config's database switched, and the scaffold generate writes for it. */
async function copyWithDatabase(name: string, database: string): Promise<string> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `apply-${name}-${database}-`));
  await cp(path.join(ROOT, 'fixtures/apply', name), dir, { recursive: true });
  const configFile = path.join(dir, 'idempotency.config.json');
  const raw = JSON.parse(await readFile(configFile, 'utf8')) as { stack: Record<string, unknown> };
  raw.stack['database'] = database;
  await writeFile(configFile, JSON.stringify(raw, null, 2));
  const { config } = await loadConfig(dir);
  const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z') });
  for (const file of generateScaffold(model, { dir: config.scaffold === false ? 'src/idempotency' : config.scaffold.dir })) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  return dir;
}

describe('the instance apply writes follows the project\'s store', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('a Fastify app on MySQL: instance.ts opens the mysql2 pool of the scaffold, and the app type-checks', async () => {
    const dir = await copyWithDatabase('fastify', 'mysql');
    dirs.push(dir);
    const first = await runApply({ cwd: dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    const instance = await readFile(path.join(dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('// DATABASE_URL is the MySQL / MariaDB server the store migration ran on: mysql://user:password@host:3306/database.');
    expect(instance).toContain("const pool = createPool(process.env['DATABASE_URL'] ?? '', POLICY);");
    expect(instance).not.toContain('pg falls back');
    // createPool here is the scaffold's mysql2 one: passing its pool to createIdempotency type-checks only so.
    expect(await readFile(path.join(dir, 'src/idempotency/index.ts'), 'utf8')).toContain("export { createPool, type PoolLimits } from './pool.js';");
    expect(await readFile(path.join(dir, 'src/idempotency/pool.ts'), 'utf8')).toContain('mysql2');
    expect(await compile(dir)).toBe('');
    // An apply and a tsc of the app: minutes on a saturated machine.
  }, 300_000);

  it('each store gets its own connection line; PostgreSQL (and a database without a store) keep the pg one', () => {
    expect(renderInstance('express', undefined, 'redis')).toContain("const pool = createPool(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', POLICY);");
    expect(renderInstance('fastify', undefined, 'sqlite')).toContain("const pool = createPool(process.env['DATABASE_URL'] ?? 'idempotency.db', POLICY);");
    expect(renderInstance('nestjs', undefined, 'dynamodb')).toContain("const pool = createPool(process.env['DYNAMODB_ENDPOINT'], POLICY);");
    expect(renderNextInstance(false, 'redis')).toContain("REDIS_URL");
    for (const store of ['postgres', undefined, 'mongodb']) {
      expect(renderInstance('express', undefined, store)).toContain("// With DATABASE_URL unset, pg falls back to its PGHOST/PGUSER/PGDATABASE environment variables.\nconst pool = createPool(process.env['DATABASE_URL'] ?? '', POLICY);");
    }
  });
});
