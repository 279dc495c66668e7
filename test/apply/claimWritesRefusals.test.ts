import { describe, expect, it } from 'vitest';
import { notesVariants, plannedMove } from './notesVariant.js';

/**
 * Outside the narrow case apply leaves a handler's writes where they are (lease mode), and says why when the reason
 * is in the handler: a write in a function it calls, a transaction of its own, a client that is not the project's pool.
 */
const HEAD = `import { Router } from 'express';
import { pool } from '../db.js';
import { insertNote } from '../notesStore.js';

export const notesRouter = Router();
`;

const NOTES_STORE = "import { pool } from './db.js';\n\nexport async function insertNote(title: string): Promise<void> {\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n}\n";

describe('apply leaves writes it cannot prove movable on the project connection', () => {
  const notes = notesVariants('express-claim-writes');
  /** The notes route with `handlerBody` as the POST handler's body; notesStore.ts holds the insert it may call. */
  const variant = (handlerBody: string, options: { mode?: string; extraFiles?: Record<string, string> } = {}) =>
    notes(`${HEAD}\nnotesRouter.post('/notes', async (req, res) => {\n${handlerBody}\n});\n`, { mode: options.mode, files: { 'src/notesStore.ts': NOTES_STORE, ...options.extraFiles } });

  it('a write made in a function the handler calls', async () => {
    const copy = await variant("  const { title } = req.body as { title: string };\n  await insertNote(title);\n  res.status(201).json({ ok: true });");
    const { result, routes, moved, steps } = await plannedMove(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(result.sources?.transactional).toBeUndefined();
    expect(steps).toHaveLength(1);
    expect(steps[0]).toContain('outside the handler function');
  }, 120_000);

  it('a handler that opens its own transaction', async () => {
    const copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('BEGIN');\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  await pool.query('COMMIT');\n  res.status(201).json({ ok: true });");
    const { routes, moved, steps } = await plannedMove(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps.join('\n')).toContain('opens a transaction');
  }, 120_000);

  it('a client that is not a pool the project creates from the driver', async () => {
    const copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.status(201).json({ ok: true });", {
      extraFiles: { 'src/db.ts': "import pg from 'pg';\n\nfunction makePool() {\n  return new pg.Pool({ connectionString: process.env['DATABASE_URL'] });\n}\n\nexport const pool = makePool();\n" },
    });
    const { routes, moved, steps } = await plannedMove(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps.join('\n')).toContain('is not a pool this project creates');
  }, 120_000);

  it('a pool handed to other code, or used in a catch block', async () => {
    const copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.locals['db'] = pool;\n  res.status(201).json({ ok: true });");
    let planned1 = await plannedMove(copy.dir);
    expect(planned1.moved).toBe(false);
    expect(planned1.steps.join('\n')).toContain('other than as pool.query(…)');
    const other = await variant("  const { title } = req.body as { title: string };\n  try {\n    await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n    res.status(201).json({ ok: true });\n  } catch (error) {\n    await pool.query('INSERT INTO failures (title) VALUES ($1)', [title]);\n    throw error;\n  }");
    planned1 = await plannedMove(other.dir);
    expect(planned1.moved).toBe(false);
    expect(planned1.routes).not.toContain('transactionOf');
    expect(planned1.steps.join('\n')).toContain('runs in a catch or finally block');
  }, 120_000);

  it('an action whose mode the config sets', async () => {
    const copy = await variant("  const { title } = req.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  res.status(201).json({ ok: true });", { mode: 'lease' });
    const { routes, moved, steps } = await plannedMove(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(steps).toEqual([]);
  }, 120_000);
});
