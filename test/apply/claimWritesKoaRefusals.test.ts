import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MOVED_WRITES } from '../../src/apply/claimWrites.js';
import { runApply } from '../../src/cli/apply.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

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

async function variant(handler: string): Promise<FixtureCopy> {
  const copy = await copyFixture('koa-claim-writes');
  const text = `${HEAD}\nnotesRouter.post('/notes', ${handler});\n`;
  await writeFile(path.join(copy.dir, 'src/routes/notes.ts'), text);
  const line = text.split('\n').findIndex((l) => l.startsWith('notesRouter.post(')) + 1;
  const configFile = path.join(copy.dir, 'idempotency.config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as { actions: Array<Record<string, unknown>> };
  config.actions[0]!['source'] = `src/routes/notes.ts:${line}`;
  await writeFile(configFile, JSON.stringify(config, null, 2));
  return copy;
}

describe('on Koa, apply leaves writes it cannot prove movable on the project connection', () => {
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

  it('a write made in a function the handler calls: the step says to pass transactionOf(idempotencyOf(ctx)) down', async () => {
    copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await insertNote(title);\n  ctx.status = 201;\n}");
    const { result, routes, moved, steps } = await planned(copy.dir);
    expect(moved).toBe(false);
    expect(routes).not.toContain('transactionOf');
    expect(result.sources?.transactional).toBeUndefined();
    expect(result.changes.map((c) => c.path)).not.toContain('src/idempotency/claimTransaction.ts');
    expect(steps).toEqual([expect.stringContaining('outside the handler function (in code it calls); pass transactionOf(idempotencyOf(ctx)) down to it by hand')]);
  }, 120_000);

  it('a handler that opens its own transaction, or records a failure on the pool in a catch block', async () => {
    copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await pool.query('BEGIN');\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  await pool.query('COMMIT');\n  ctx.status = 201;\n}");
    let outcome = await planned(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('opens a transaction');
    await copy.remove();
    copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  try {\n    await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n    ctx.status = 201;\n  } catch (error) {\n    await pool.query('INSERT INTO failures (title) VALUES ($1)', [title]);\n    throw error;\n  }\n}");
    outcome = await planned(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('runs in a catch or finally block');
  }, 120_000);

  it('a pool handed on to other code, and a handler that destructures its context', async () => {
    copy = await variant("async (ctx) => {\n  const { title } = ctx.request.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  ctx.state['db'] = pool;\n  ctx.status = 201;\n}");
    let outcome = await planned(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.steps.join('\n')).toContain('other than as pool.query(…)');
    await copy.remove();
    copy = await variant("async ({ request, response }) => {\n  const { title } = request.body as { title: string };\n  await pool.query('INSERT INTO notes (title) VALUES ($1)', [title]);\n  response.status = 201;\n}");
    outcome = await planned(copy.dir);
    expect(outcome.moved).toBe(false);
    expect(outcome.routes).not.toContain('transactionOf');
    expect(outcome.steps.join('\n')).toContain('no named request parameter');
  }, 120_000);
});
