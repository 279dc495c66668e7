import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MOVED_WRITES } from '../../src/apply/claimWrites.js';
import { runApply } from '../../src/cli/apply.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

/**
 * Outside the narrow case apply leaves a handler's writes where they are (lease mode), and says why when the reason
 * is in the handler: a write in a function it calls, a transaction of its own, a client that is not the project's pool.
 */
const HEAD = `import { Router } from 'express';
import { pool } from '../db.js';
import { insertNote } from '../notesStore.js';

export const notesRouter = Router();
`;

async function variant(handlerBody: string, options: { mode?: string; extraFiles?: Record<string, string> } = {}): Promise<FixtureCopy> {
  const copy = await copyFixture('express-claim-writes');
  const text = `${HEAD}\nnotesRouter.post('/notes', async (req, res) => {\n${handlerBody}\n});\n`;
  await writeFile(path.join(copy.dir, 'src/routes/notes.ts'), text);
  const line = text.split('\n').findIndex((l) => l.startsWith('notesRouter.post(')) + 1;
  const files = { 'src/notesStore.ts': "import { pool } from './db.js';\n\nexport async function insertNote(title: string): Promise<void> {\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n}\n", ...options.extraFiles };
  for (const [file, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(copy.dir, file)), { recursive: true });
    await writeFile(path.join(copy.dir, file), contents);
  }
  const configFile = path.join(copy.dir, 'idempotency.config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as { actions: Array<Record<string, unknown>> };
  config.actions[0]!['source'] = `src/routes/notes.ts:${line}`;
  if (options.mode) config.actions[0]!['mode'] = options.mode;
  await writeFile(configFile, JSON.stringify(config, null, 2));
  return copy;
}

describe('apply leaves writes it cannot prove movable on the project connection', () => {
  let copy: FixtureCopy | undefined;
  afterEach(async () => {
    await copy?.remove();
    copy = undefined;
  });

  const planned = async (dir: string) => {
    const result = await runApply({ cwd: dir, dryRun: true, quiet: true }, { interactive: false });
    const routes = result.changes.find((c) => c.path === 'src/routes/notes.ts')?.after ?? '';
    return { result, routes, moved: result.edits.some((e) => e.summary.startsWith(MOVED_WRITES)), steps: result.manual.map((m) => m.reason).filter((r) => r.includes('lease mode')) };
  };

  it('a write made in a function the handler calls', async () => {
    copy = await variant("  const { title } = req.body as { title: string };\n  await insertNote(title);\n  res.status(201).json({ ok: true });");
    const { result, routes, moved, steps } = await planned(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(result.sources?.transactional).toBeUndefined();
    expect(steps).toHaveLength(1);
    expect(steps[0]).toContain('outside the handler function');
  }, 120_000);

  it('a handler that opens its own transaction', async () => {
    copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('BEGIN');\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  await pool.query('COMMIT');\n  res.status(201).json({ ok: true });");
    const { routes, moved, steps } = await planned(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps.join('\n')).toContain('opens a transaction');
  }, 120_000);

  it('a client that is not a pool the project creates from the driver', async () => {
    copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.status(201).json({ ok: true });", {
      extraFiles: { 'src/db.ts': "import pg from 'pg';\n\nfunction makePool() {\n  return new pg.Pool({ connectionString: process.env['DATABASE_URL'] });\n}\n\nexport const pool = makePool();\n" },
    });
    const { routes, moved, steps } = await planned(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps.join('\n')).toContain('is not a pool this project creates');
  }, 120_000);

  it('a pool handed to other code, or used in a catch block', async () => {
    copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.locals['db'] = pool;\n  res.status(201).json({ ok: true });");
    let planned1 = await planned(copy.dir);
    expect(planned1.moved).toBe(false);
    expect(planned1.steps.join('\n')).toContain('other than as pool.query(…)');
    await copy.remove();
    copy = await variant("  const { title } = req.body as { title: string };\n  try {\n    await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n    res.status(201).json({ ok: true });\n  } catch (error) {\n    await pool.query('INSERT INTO failures (title) VALUES ($1)', [title]);\n    throw error;\n  }");
    planned1 = await planned(copy.dir);
    expect(planned1.moved).toBe(false);
    expect(planned1.routes).not.toContain('transactionOf');
    expect(planned1.steps.join('\n')).toContain('runs in a catch or finally block');
  }, 120_000);

  it('an action whose mode the config sets', async () => {
    copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.status(201).json({ ok: true });", { mode: 'lease' });
    const { routes, moved, steps } = await planned(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps).toEqual([]);
  }, 120_000);
});
