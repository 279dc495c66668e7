import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as prettier from 'prettier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUSE_STYLE } from '../../src/emit/format.js';
import { generate } from '../../src/generate.js';
import { documentExcerpts, generateScaffold, type ModuleType } from '../../src/scaffold/index.js';
import { modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason, runGeneratedSuite } from './harness.js';
import { createProjectSchema, generateJavaScriptProject, run, SCAFFOLD_DIR, startApp, type JavaScriptProject } from './javascriptProject.js';

const FIXTURE = 'express-js-orders';
const skip = await postgresSkipReason();
if (skip) console.warn(`JavaScript scaffolding against PostgreSQL skipped: ${skip}`);

/** The app a JavaScript user writes: plain JS in the project, loading the generated layer the way the project loads modules. */
function appSource(moduleType: ModuleType): string {
  const imports =
    moduleType === 'module'
      ? `import express from 'express';
import { createIdempotency, createPool, POLICY } from './${SCAFFOLD_DIR}/index.js';`
      : `'use strict';
const express = require('express');
const { createIdempotency, createPool, POLICY } = require('./${SCAFFOLD_DIR}/index.js');`;
  return `${imports}

const pool = createPool(process.env.DATABASE_URL, POLICY, 25);
const idempotency = createIdempotency({ pool, principal: (req) => req.header('x-user') });
let charges = 0;
const app = express();
app.use(express.json());
app.post('/orders/:orderId/payments', idempotency.chargeOrder, async (req, res) => {
  charges += 1;
  // Long enough that every duplicate arrives while the first is still charging.
  await new Promise((resolve) => setTimeout(resolve, 200));
  res.status(201).json({ paymentIntent: 'pi_' + charges, orderId: req.params.orderId, amount: req.body.amount });
});
app.get('/charges', (_req, res) => res.json({ charges }));
const server = app.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
process.on('SIGTERM', () => server.close(() => pool.end()));
`;
}

describe.each<ModuleType>(['module', 'commonjs'])('JavaScript + Express + PostgreSQL scaffolding in a %s project', (moduleType) => {
  let project: JavaScriptProject;
  const js = () => project.files.filter((file) => file.endsWith('.js'));
  const read = (file: string) => readFile(path.join(project.dir, file), 'utf8');

  beforeAll(async () => {
    project = await generateJavaScriptProject(FIXTURE, moduleType);
  });
  afterAll(async () => {
    if (project) await rm(project.dir, { recursive: true, force: true });
  });

  it('writes JavaScript only, in the project module format and the house style', async () => {
    expect(project.result.warnings).toEqual([]);
    expect(project.files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    for (const name of ['index.js', 'express.js', 'core.js', 'pgStore.js', 'settings.js', 'providers.js', 'cleanup-job.js', 'idempotency.test.js', 'README.md']) {
      expect(project.files).toContain(`${SCAFFOLD_DIR}/${name}`);
    }
    const index = await read(`${SCAFFOLD_DIR}/index.js`);
    if (moduleType === 'module') {
      expect(index).toContain('export function createIdempotency(setup)');
      expect(index).not.toMatch(/\brequire\(|module\.exports/);
    } else {
      expect(index).toMatch(/^'use strict';/);
      expect(index).toContain("require('./core.js')");
      expect(index).toMatch(/module\.exports = \{[^}]*\bcreateIdempotency\b/);
      expect(index).not.toMatch(/^(import|export) /m);
    }
    for (const file of js()) {
      const text = await read(file);
      const options = { ...HOUSE_STYLE, filepath: file, endOfLine: 'lf' } as const;
      expect(await prettier.check(text, options), `${file} is not in the house style`).toBe(true);
      // Comments survive the type stripping.
      if (file !== `${SCAFFOLD_DIR}/index.js`) expect(text, file).toMatch(/\/\/|\/\*\*/);
    }
    expect(await read(`${SCAFFOLD_DIR}/express.js`)).toContain('The handler\'s response is held back until it has been recorded');
  });

  it('a second generate finds everything up to date (deterministic output, same module format)', async () => {
    const again = await generate({ cwd: project.dir, check: true, date: '2026-01-15' });
    expect(again.plan.filter((item) => item.action !== 'unchanged').map((item) => `${item.action} ${item.path}`)).toEqual([]);
  });

  it('every .js file passes node --check', async () => {
    expect(js().length).toBeGreaterThan(12);
    for (const file of js()) {
      await run(process.execPath, ['--check', file], { cwd: project.dir }).catch((error: { stderr?: string }) => {
        throw new Error(`node --check ${file} failed:\n${error.stderr ?? String(error)}`);
      });
    }
  });

  it('every runtime module loads in plain Node: nothing imports a type at runtime', async () => {
    // Job scripts (cleanup, reconciliation) run when loaded: they are run as processes by their own tests.
    const modules = js().filter((file) => !file.endsWith('.test.js') && !file.endsWith('cleanup-job.js') && !file.endsWith('reconcile/job.js'));
    const load =
      moduleType === 'module'
        ? `for (const file of ${JSON.stringify(modules)}) await import('./' + file);`
        : `for (const file of ${JSON.stringify(modules)}) require('./' + file);`;
    const probe = moduleType === 'module' ? 'probe.mjs' : 'probe.cjs';
    await writeFile(path.join(project.dir, probe), `${load}\nconsole.log('loaded ' + ${modules.length});\n`);
    const { stdout } = await run(process.execPath, [probe], { cwd: project.dir });
    expect(stdout.trim()).toBe(`loaded ${modules.length}`);
  });

  it('the README shows the JavaScript wiring', async () => {
    const readme = await read(`${SCAFFOLD_DIR}/README.md`);
    expect(readme).toContain('```js\n');
    expect(readme).not.toContain('```ts');
    expect(readme).not.toMatch(/\b[\w-]+\.ts\b/);
    expect(readme).toContain('process.env.DATABASE_URL, POLICY)');
    expect(readme).toContain("app.post('/orders/:orderId/payments', idempotency.chargeOrder, chargeOrderHandler);");
    if (moduleType === 'module') expect(readme).toContain("import { createIdempotency, createPool, POLICY } from './idempotency/index.js';");
    else expect(readme).toContain("const { createIdempotency, createPool, POLICY } = require('./idempotency/index.js');");
    expect(readme).toContain(`npx vitest run ${SCAFFOLD_DIR}`);
  });

  it('the document embeds the JavaScript exactly as written', async () => {
    const document = await read(project.result.document);
    const middleware = (await read(`${SCAFFOLD_DIR}/express.js`)).trimEnd();
    expect(document).toContain('```javascript');
    expect(document).toContain(middleware);
    expect(document).toContain((await read(`${SCAFFOLD_DIR}/idempotency.test.js`)).trimEnd());
    expect(document).not.toContain('```typescript');
  });

  it.skipIf(skip !== undefined)('passes its own generated test suite with vitest against the real PostgreSQL', async () => {
    const stdout = await runGeneratedSuite(project.dir);
    // 12 HTTP scenarios, the webhook (4) and reconciliation (2) suites the design's webhook and Stripe action bring,
    // and the shipped store contract (8).
    expect(stdout).toMatch(/Tests\s+27 passed/);
    expect(stdout).not.toMatch(/\d+ failed/);
    expect(stdout).not.toMatch(/skipped/);
  });

  describe.skipIf(skip !== undefined)('black box: a plain JavaScript Express app on the generated middleware', () => {
    let schema: Awaited<ReturnType<typeof createProjectSchema>>;
    let app: Awaited<ReturnType<typeof startApp>>;

    beforeAll(async () => {
      schema = await createProjectSchema(DATABASE_URL, project.dir, `js_${moduleType === 'module' ? 'esm' : 'cjs'}`);
      await writeFile(path.join(project.dir, 'app.js'), appSource(moduleType));
      app = await startApp(project.dir, 'app.js', { DATABASE_URL: schema.url });
    });
    afterAll(async () => {
      await app?.stop();
      await schema?.drop();
    });

    it('20 concurrent requests with one key charge once; the retry replays with Idempotent-Replayed: true', async () => {
      const send = () =>
        fetch(`${app.url}/orders/ord_1042/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'a3f1c9e2-charge-ord_1042', 'x-user': 'cus_77' },
          body: JSON.stringify({ amount: 12900, currency: 'EUR' }),
        });
      const responses = await Promise.all(Array.from({ length: 20 }, send));
      const statuses = responses.map((response) => response.status);
      expect(((await (await fetch(`${app.url}/charges`)).json()) as { charges: number }).charges).toBe(1);
      expect(statuses.filter((status) => status >= 500)).toEqual([]);
      expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
      expect(statuses).toContain(201);
      for (const response of responses.filter((r) => r.status === 409)) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      const first = await responses.find((r) => r.status === 201)!.text();

      const replay = await send();
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe(first);
      expect(((await (await fetch(`${app.url}/charges`)).json()) as { charges: number }).charges).toBe(1);

      // Same key, different amount: refused without running or revealing the stored body.
      const changed = await fetch(`${app.url}/orders/ord_1042/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'a3f1c9e2-charge-ord_1042', 'x-user': 'cus_77' },
        body: JSON.stringify({ amount: 99900, currency: 'EUR' }),
      });
      expect(changed.status).toBe(422);
      expect(changed.headers.get('content-type')).toContain('application/problem+json');
      expect(await changed.text()).not.toContain('pi_1');
    });

    it('the cleanup job runs as a script and reports the deleted-rows metric (stdout, and a Pushgateway when set)', async () => {
      const pushed: Array<{ url: string; body: string }> = [];
      const gateway = http.createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          pushed.push({ url: request.url ?? '', body });
          response.writeHead(200).end();
        });
      });
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      try {
        const PUSHGATEWAY_URL = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/`;
        const { stdout } = await run(process.execPath, [`${SCAFFOLD_DIR}/cleanup-job.js`], { cwd: project.dir, env: { ...process.env, DATABASE_URL: schema.url, PUSHGATEWAY_URL } });
        expect(stdout).toMatch(/cleanup-job: deleted 0 expired records in 1 batches/);
        expect(stdout).toMatch(/^idempotency_cleanup_deleted_rows_total 0$/m);
        expect(pushed).toEqual([{ url: '/metrics/job/idempotency_cleanup', body: 'idempotency_cleanup_deleted_rows_total 0\n' }]);
      } finally {
        await new Promise((resolve) => gateway.close(resolve));
      }
    });
  });
});

describe('JavaScript scaffolding (pure)', () => {
  it('is the TypeScript scaffolding with the types stripped: same files, same roles and classes', async () => {
    const typescript = generateScaffold(await modelFor(FIXTURE, (raw) => ((raw.stack as Record<string, unknown>).language = 'typescript')), { dir: 'x' });
    const javascript = generateScaffold(await modelFor(FIXTURE), { dir: 'x', moduleType: 'module' });
    const describeFiles = (files: typeof typescript) => files.map((file) => `${file.path.replace(/\.ts$/, '.js')} ${file.role} ${file.class}`).sort();
    expect(describeFiles(javascript)).toEqual(describeFiles(typescript));
    // Transpiled files go to prettier; only those their emitters print as JavaScript are already in the house style
    // (test/scaffold/directJavaScript.test.ts holds them to the transpiled and formatted text).
    const direct = ['x/cleanup-job.js', 'x/index.js', 'x/providers.js', 'x/reconcile/job.js', 'x/settings.js'];
    expect(javascript.filter((file) => file.path.endsWith('.js') && file.formatted === true).map((file) => file.path).sort()).toEqual(direct);
    expect(generateScaffold(await modelFor(FIXTURE), { dir: 'x', moduleType: 'module' })).toEqual(javascript);
  });

  it('documentExcerpts returns the JavaScript, for the project module format', async () => {
    const model = await modelFor(FIXTURE);
    for (const moduleType of ['module', 'commonjs'] as const) {
      const files = generateScaffold(model, { dir: 'src/idempotency', moduleType });
      const excerpts = documentExcerpts(model, { dir: 'src/idempotency', moduleType });
      for (const id of ['middleware', 'fingerprint', 'cleanup', 'tests'] as const) {
        const excerpt = excerpts[id]!;
        expect(excerpt.language).toBe('javascript');
        expect(excerpt.path).toMatch(/\.js$/);
        expect(files.find((file) => file.path === excerpt.path)?.contents).toBe(excerpt.code);
      }
      expect(excerpts.ddl?.language).toBe('sql');
    }
  });
});
