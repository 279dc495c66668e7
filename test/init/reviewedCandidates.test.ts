import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../src/cli/init.js';
import { generate } from '../../src/generate.js';
import { inspectProject } from '../../src/inspect/index.js';
import { createLogger } from '../../src/logger.js';
import { actionsFromInspection } from '../../src/questions/actionsFromInspection.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';
import { ROOT } from './wizardHarness.js';

const made: string[] = [];

/** The shape of javieraviles/node-typescript-koa-rest@3233861, rebuilt small: Koa CRUD routes and a cron that only logs. */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'koa-crud', dependencies: { koa: '^2.13.1', '@koa/router': '^10.0.0', cron: '^1.8.2', pg: '^8.5.1' }, devDependencies: { typescript: '^5.0.0', vitest: '^4.0.0' } }, null, 2),
  'src/routes.ts': `import Router from '@koa/router';
import { users } from './users';

export const router = new Router();
router.post('/users', users.create);
router.put('/users/:id', users.replace);
router.delete('/users/:id', users.remove);
`,
  'src/users.ts': `import { Pool } from 'pg';
const pool = new Pool({ connectionString: process.env.DATABASE_URL });
export const users = {
  create: async (ctx: any) => {
    ctx.body = await pool.query('INSERT INTO users (email) VALUES ($1) RETURNING id', [ctx.request.body.email]);
  },
  replace: async (ctx: any) => {
    await pool.query('UPDATE users SET email = $1 WHERE id = $2', [ctx.request.body.email, ctx.params.id]);
  },
  remove: async (ctx: any) => {
    await pool.query('DELETE FROM users WHERE id = $1', [ctx.params.id]);
  },
};
`,
  'src/cron.ts': `import { CronJob } from 'cron';
import { syncRates } from './rates';

export const heartbeat = new CronJob('0 * * * *', () => {
  console.log('Executing cron job once every hour');
});
export const rates = new CronJob('*/5 * * * *', () => {
  syncRates();
});
`,
  'src/rates.ts': `export function syncRates(): void {}\n`,
  'src/server.ts': `import Koa from 'koa';
import { router } from './routes';

new Koa().use(router.routes()).listen(3000);
`,
};

async function project(): Promise<string> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', 'init-reviewed-'));
  made.push(dir);
  for (const [file, text] of Object.entries(FILES)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('what inspection found and init left out', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('a job whose callback only logs is offered unchecked, with why; one that calls something is pre-checked', async () => {
    const inspection = await inspectProject(await project());
    const crons = actionsFromInspection(inspection).filter((c) => c.action.trigger === 'cron');
    expect(crons.map((c) => [c.action.source, c.checked, c.note])).toEqual([
      ['src/cron.ts:4', false, 'its callback only logs: a second run of a slot changes nothing'],
      ['src/cron.ts:7', true, undefined],
    ]);
  });

  it('the design names every handler left unprotected with the reason, and drops one once the config protects it', async () => {
    const cwd = await project();
    const out = new PassThrough();
    await runInit({ cwd, yes: true, date: '2026-01-15', format: 'md', scaffold: false }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
    const config = JSON.parse(await readFile(path.join(cwd, 'idempotency.config.json'), 'utf8')) as { actions: Array<{ name: string }>; output: string };
    expect(config.actions.map((a) => a.name)).toEqual(['syncRates']);

    const snapshot = JSON.parse(await readFile(path.join(cwd, '.idempotency-builder/existing-protection.json'), 'utf8')) as { reviewed: unknown[] };
    expect(snapshot.reviewed).toEqual([
      { name: 'runCronJob', trigger: 'cron', route: '0 * * * *', source: 'src/cron.ts:4', reason: 'its callback only logs: a second run of a slot changes nothing' },
      { name: 'createUser', trigger: 'http', route: 'POST /users', source: 'src/routes.ts:5', reason: 'no external or money effect found in its code: check it if a second copy would harm' },
      { name: 'replace', trigger: 'http', route: 'PUT /users/:id', source: 'src/routes.ts:6', reason: 'PUT is idempotent by nature: a repeat leaves the same state' },
      { name: 'deleteUser', trigger: 'http', route: 'DELETE /users/:id', source: 'src/routes.ts:7', reason: 'DELETE is idempotent by nature: a repeat leaves the same state' },
    ]);
    const design = await readFile(path.join(cwd, config.output), 'utf8');
    const section = design.slice(design.indexOf('### Found in the code, not protected'), design.indexOf('### syncRates'));
    expect(section).toContain('these 4 handlers');
    expect(section).toContain('| `createUser` | HTTP endpoint | `POST /users` · `src/routes.ts:5` | No external or money effect found in its code: check it if a second copy would harm |');
    expect(section).toContain('| `runCronJob` | Scheduled job | `0 * * * *` · `src/cron.ts:4` | Its callback only logs');

    // Protecting one (by its name, as the design suggests) takes it off the list; generate reads the recorded snapshot.
    const edited = { ...config, actions: [...config.actions, { name: 'createUser', trigger: 'http', route: 'POST /users', significantFields: ['email'], source: 'src/routes.ts:5' }] };
    await writeFile(path.join(cwd, 'idempotency.config.json'), `${JSON.stringify(edited, null, 2)}\n`);
    const result = await generate({ cwd, date: '2026-01-15' });
    expect(result.model.reviewed.map((r) => r.name)).toEqual(['runCronJob', 'replace', 'deleteUser']);
    expect(await readFile(path.join(cwd, config.output), 'utf8')).toContain('these 3 handlers');
  });
});
