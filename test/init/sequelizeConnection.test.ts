import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { runInit } from '../../src/cli/init.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A small Express app whose Sequelize connects with a URL built from PG* variables in a template string. */
async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-sequelize-connection-'));
  dirs.push(dir);
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'orders', type: 'module', dependencies: { express: '^4.19.0', sequelize: '^6.37.0', pg: '^8.11.0' }, devDependencies: { typescript: '^5.4.0', vitest: '^1.6.0' } }, null, 2),
    'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }, null, 2),
    'src/db.ts': `import { Sequelize } from 'sequelize';

const port = 5432;
export const sequelize = new Sequelize(
  \`postgres://\${process.env.PGUSER}:\${process.env.PGPASSWORD}@\${process.env.PGHOST}:\${port}/\${process.env.ORDERS_DB}\`,
  { logging: false },
);
`,
    'src/app.ts': `import express from 'express';
import { sequelize } from './db.js';

export const app = express();
app.use(express.json());

app.post('/orders', async (req, res) => {
  const [rows] = await sequelize.query('INSERT INTO orders (sku, quantity) VALUES (?, ?) RETURNING id', { replacements: [req.body.sku, req.body.quantity] });
  res.status(201).json(rows);
});
`,
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  return dir;
}

describe('init --yes, then apply, on a Sequelize project whose URL is a template of PG* variables', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('the generated pool reads the same variables, part by part, and the port is left to its default', async () => {
    const cwd = await project();
    const out = new PassThrough();
    let said = '';
    out.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const init = await runInit({ cwd, yes: true, date: '2026-01-15' }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
    expect(init.configPath, said).toBe(path.join(cwd, 'idempotency.config.json'));
    const config = JSON.parse(await readFile(path.join(cwd, 'idempotency.config.json'), 'utf8')) as { stack: { database: string; framework: string } };
    expect(config.stack).toMatchObject({ database: 'postgres', framework: 'express' });

    const apply = await runApply({ cwd, yes: true, quiet: true }, { interactive: false });
    expect(apply.stale).toEqual([]);
    const instance = await readFile(path.join(cwd, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('// As your database client connects (src/db.ts:4), from the same variables: the PostgreSQL server the store\n');
    // Inside openPool() (the pool opens on first use), as prettier indents it there.
    expect(instance).toMatch(/\n\s+host: process\.env\['PGHOST'\],\n\s+user: process\.env\['PGUSER'\],\n\s+password: process\.env\['PGPASSWORD'\],\n\s+database: process\.env\['ORDERS_DB'\],\n/);
    expect(instance).not.toContain('DATABASE_URL');
    expect(instance).not.toContain('port:');
  });
});
