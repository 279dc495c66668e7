import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInspection } from '../../src/inspect/formatInspection.js';
import { inspectProject } from '../../src/inspect/index.js';
import type { EndpointFinding } from '../../src/inspect/types.js';

/** Endpoints as a reviewer checks them: route, handler file:line, and whether the mount path is known. */
async function endpoints(root: string): Promise<string[]> {
  const { findings } = await inspectProject(root);
  return findings.filter((f): f is EndpointFinding => f.kind === 'endpoint').map((f) => `${f.id} ${f.file}:${f.line}${f.prefixResolved ? '' : ' (mount prefix unknown)'}`);
}

/**
 * Issue #15: route modules loaded in a loop over a directory (`readdirSync(__dirname)`, `await readdir(dir)`) and
 * mounted under a path made from the file name. Each module's routes carry that path; files the loop's filter or
 * guards skip are not mounted; a path the loop does not make from the name is recorded as an unknown prefix.
 */
describe('route modules mounted in a readdir loop', () => {
  it('CommonJS: app.use per file, a forEach whose prefix comes from the module, and require(…)(app)', async () => {
    expect(await endpoints(path.resolve('fixtures/projects/readdir-routes-js'))).toEqual([
      // api/index.js mounts each module at its own `mod.prefix`: known only at run time.
      'POST /api api/invoices.js:4 (mount prefix unknown)',
      'POST /hooks/shipping lib/hooks/shipping.js:2',
      // routes/index.js is skipped by the loop (`file !== 'index.js'`), so nothing mounts it.
      'POST /skipped routes/index.js:4 (mount prefix unknown)',
      'POST /orders routes/orders.js:4',
      'DELETE /orders/:id routes/orders.js:8',
      'POST /refunds/:orderId routes/refunds.js:4',
    ]);
  });

  it('TypeScript ESM: await import(…) of each file a filter keeps, named by path.parse(file).name', async () => {
    const root = path.resolve('fixtures/projects/readdir-routes-ts');
    expect(await endpoints(root)).toEqual([
      'DELETE /:id src/admin/users.ts:6 (mount prefix unknown)',
      // `if (file.startsWith('_')) continue`: never mounted.
      'POST /charge src/routes/_legacy.ts:5 (mount prefix unknown)',
      'POST /api/payments src/routes/payments.ts:5',
      'POST /api/payments/:id/refund src/routes/payments.ts:10',
      'PUT /api/subscriptions/:id src/routes/subscriptions.ts:5',
    ]);
    expect(formatInspection(await inspectProject(root), { value: (v) => String(v), dim: (v) => v })).toMatch(/DELETE \/:id.*mount prefix unknown/);
  });

  describe('the loop shapes real projects use', () => {
    let root: string;
    const write = async (rel: string, text: string) => {
      await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await writeFile(path.join(root, rel), text);
    };
    const router = (route: string) => `const express = require('express');\nconst router = express.Router();\nrouter.post('${route}', (req, res) => res.status(201).end());\nmodule.exports = router;\n`;

    beforeAll(async () => {
      root = await mkdtemp(path.join(tmpdir(), 'inspect-readdir-'));
      await write('package.json', JSON.stringify({ name: 'shop', dependencies: { express: '4.19.2' } }));
      await write(
        'server.js',
        `const express = require('express');
const fs = require('fs');
const path = require('path');
const app = express();
const v1 = express.Router();
fs.readdirSync(path.join(__dirname, 'v1'))
  .filter((f) => f !== 'index.js' && /\\.js$/.test(f))
  .forEach((f) => v1.use('/' + path.basename(f, '.js'), require(path.join(__dirname, 'v1', f))));
app.use('/v1', v1);
for (const file of fs.readdirSync(path.join(__dirname, 'billing'))) {
  if (['index.js', 'health.js'].includes(file)) continue;
  app.use(\`/billing/\${file.split('.')[0].toLowerCase()}\`, require(\`./billing/\${file}\`));
  // One module, whatever the entry: an ordinary mount, not one per file.
  app.use(require('./middleware/audit'));
}
// A folder per feature, each with its routes module.
for (const feature of fs.readdirSync(path.join(__dirname, 'modules'))) {
  app.use(\`/\${feature}\`, require(\`./modules/\${feature}/routes\`));
}
module.exports = app;
`,
      );
      await write('v1/carts.js', router('/:id/checkout'));
      await write('v1/index.js', router('/not-mounted'));
      await write('v1/README.md', 'Version 1 of the API.\n');
      await write('billing/Invoices.js', router('/'));
      await write('billing/health.js', router('/ping'));
      await write('middleware/audit.js', router('/audit'));
      await write('modules/shipping/routes.js', router('/quotes'));
      await write('modules/shipping/rates.js', router('/not-mounted-either'));
      await write('modules/tax/routes.js', router('/rates'));
      // A second project: Fastify plugins registered per file with a prefix.
      await write('plugins-app/package.json', JSON.stringify({ name: 'plugins-app', dependencies: { fastify: '4.28.1' } }));
      await write(
        'plugins-app/server.js',
        `const fastify = require('fastify')();
const { readdirSync } = require('fs');
for (const name of readdirSync(__dirname + '/plugins')) {
  fastify.register(require('./plugins/' + name), { prefix: '/' + name.replace('.js', '') });
}
module.exports = fastify;
`,
      );
      await write('plugins-app/plugins/refunds.js', "module.exports = async function refunds(fastify) {\n  fastify.post('/', async (request) => ({ amount: request.body.amount }));\n};\n");
    });
    afterAll(() => rm(root, { recursive: true, force: true }));

    it('filter chains, path.basename, split, includes lists, a folder per entry, Fastify register prefixes', async () => {
      expect(await endpoints(root)).toEqual([
        'POST /billing/invoices billing/Invoices.js:3',
        'POST /ping billing/health.js:3 (mount prefix unknown)',
        'POST /audit middleware/audit.js:3',
        'POST /not-mounted-either modules/shipping/rates.js:3 (mount prefix unknown)',
        'POST /shipping/quotes modules/shipping/routes.js:3',
        'POST /tax/rates modules/tax/routes.js:3',
        'POST /v1/carts/:id/checkout v1/carts.js:3',
        'POST /not-mounted v1/index.js:3 (mount prefix unknown)',
      ]);
      expect(await endpoints(path.join(root, 'plugins-app'))).toEqual(['POST /refunds plugins/refunds.js:2']);
    });
  });
});
