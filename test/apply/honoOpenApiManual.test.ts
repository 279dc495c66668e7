import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planApply } from '../../src/apply/planApply.js';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { ROOT } from './fixtureApp.js';

const ROUTER = `import { OpenAPIHono } from '@hono/zod-openapi';
import * as handlers from './notes.handlers';
import * as routes from './notes.routes';

export const notes = new OpenAPIHono()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create);
`;

const CONFIG = {
  actions: [{ name: 'createNote', trigger: 'http', route: 'POST /notes', significantFields: ['title'], source: 'src/notes.index.ts:7' }],
  stack: { language: 'typescript', framework: 'hono', database: 'postgres', testFramework: 'vitest' },
  payments: [],
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
  scaffold: { dir: 'src/idempotency' },
};

describe('apply on a @hono/zod-openapi router: the route is left to the user, with what it needs', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('writes the instance that `idempotency.createNote` comes from, and says its principal is a guess', async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'apply-openapi-'));
    dirs.push(dir);
    await mkdir(path.join(dir, 'src'), { recursive: true });
    await writeFile(path.join(dir, 'src/notes.index.ts'), ROUTER);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'notes', type: 'module', dependencies: { hono: '^4.9.0', '@hono/zod-openapi': '^1.1.0' } }));
    const config = parseConfig(JSON.stringify(CONFIG));
    const model = buildDesign(config, undefined, { now: new Date('2026-01-15T00:00:00Z') });
    for (const file of generateScaffold(model, { dir: 'src/idempotency' })) {
      await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
      await writeFile(path.join(dir, file.path), file.contents);
    }
    const plan = await planApply(dir, { config, model });
    expect(plan.stale).toEqual([]);
    expect(plan.changes.map((c) => c.path)).toEqual(['src/idempotency/instance.ts']);
    const instance = plan.changes[0]!.after;
    expect(instance).toContain('export const idempotency = createIdempotency({');
    const reasons = plan.manual.map((m) => `${m.file}:${m.line} ${m.reason}`);
    expect(reasons).toContainEqual(expect.stringContaining("src/notes.index.ts:7 POST /notes is registered with @hono/zod-openapi's .openapi(…) at line 7"));
    expect(reasons).toContainEqual(expect.stringContaining("src/idempotency/instance.ts:1 no handler apply wired reads who the caller is, so the principal in src/idempotency/instance.ts (c.get('user')?.id) is the framework's convention"));
  }, 120_000);
});
