import { describe, expect, it } from 'vitest';
import { notesVariants, plannedMove } from './notesVariant.js';

/**
 * The Express refusals hold on Koa (@koa/router) too: outside the narrow case the handler's writes stay on the pool
 * (lease mode), with a step that names what to pass down in Koa's terms (`idempotencyOf(ctx)`).
 */
const HEAD = `import Router from '@koa/router';
import { pool } from '../db.js';

export const notesRouter = new Router();

async function insertNote(title: string): Promise<void> {
  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);
}
`;

describe('on Koa, apply leaves writes it cannot prove movable on the project connection', () => {
  const notes = notesVariants('koa-claim-writes');
  /** The notes route with `handler` as the POST handler. */
  const variant = (handler: string) => notes(`${HEAD}\nnotesRouter.post('/notes', ${handler});\n`);

  it('a write made in a function the handler calls: the step says to pass transactionOf(idempotencyOf(ctx)) down', async () => {
    const copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await insertNote(title);\n  ctx.status = 201;\n}");
    const { result, routes, moved, steps } = await plannedMove(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(result.sources?.transactional).toBeUndefined();
    expect(result.changes.map((c) => c.path)).not.toContain('src/idempotency/claimTransaction.ts');
    expect(steps).toEqual([expect.stringContaining('outside the handler function (in code it calls); pass transactionOf(idempotencyOf(ctx)) down to it by hand')]);
  }, 120_000);

  it('a handler that opens its own transaction, or records a failure on the pool in a catch block', async () => {
    const copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await pool.query('BEGIN');\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  await pool.query('COMMIT');\n  ctx.status = 201;\n}");
    let outcome = await plannedMove(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('opens a transaction');
    const other = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  try {\n    await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n    ctx.status = 201;\n  } catch (error) {\n    await pool.query('INSERT INTO failures (title) VALUES ($1)', [title]);\n    throw error;\n  }\n}");
    outcome = await plannedMove(other.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('runs in a catch or finally block');
  }, 120_000);

  it('a pool handed on to other code, and a handler that destructures its context', async () => {
    const copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  ctx.state['db'] = pool;\n  ctx.status = 201;\n}");
    let outcome = await plannedMove(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.steps.join('\n')).toContain('other than as pool.query(…)');
    const other = await variant("async ({ request, response }) => {\n  const { title } = request.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  response.status = 201;\n}");
    outcome = await plannedMove(other.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('no named request parameter');
  }, 120_000);
});
