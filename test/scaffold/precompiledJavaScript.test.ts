import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { clearFormatCache, formatFiles } from '../../src/emit/format.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { buildPrecompiledTable, usePrecompiledTable } from '../../src/scaffold/javascript/precompiled.js';
import { renderedSuites } from '../../src/scaffold/javascript/renderedSuites.js';
import { modelFor } from './generateInto.js';

// `npm run build` precompiles the verbatim templates (vitest suites included) to house-style JavaScript, so a
// JavaScript generate neither transpiles nor formats them; what lands on disk must be byte-identical to transpiling and formatting at run time.
const TEMPLATES = fileURLToPath(new URL('../../templates/scaffold/typescript/', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  usePrecompiledTable(undefined);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('precompiled JavaScript templates', () => {
  it('give the same files as transpiling and formatting at run time, in both module formats', { timeout: 600_000 }, async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'ib-precompiled-'));
    dirs.push(cwd);
    const model = await modelFor('express-js-orders');
    const table = await buildPrecompiledTable(TEMPLATES, undefined, renderedSuites());
    for (const moduleType of ['module', 'commonjs'] as const) {
      const written = async () => {
        clearFormatCache();
        const files = await formatFiles(generateScaffold(model, { dir: 'src/idempotency', moduleType }), cwd);
        return files.map((file) => [file.path, file.contents]);
      };
      usePrecompiledTable(new Map());
      const transpiled = await written();
      usePrecompiledTable(table);
      const precompiled = generateScaffold(model, { dir: 'src/idempotency', moduleType }).filter((file) => file.formatted);
      expect(precompiled.map((file) => file.path), moduleType).toEqual(expect.arrayContaining([
          'src/idempotency/core.js',
          'src/idempotency/pgStore.js',
          'src/idempotency/express.js',
          // The in-memory store every scaffold carries.
          'src/idempotency/memoryStore.js',
          // vitest suites copied verbatim, and the store contract they run: ES modules in both module formats.
          'src/idempotency/store-contract.js',
          // Rendered, but the same for every design: the build precompiles each store's.
          'src/idempotency/store-contract.test.js',
          'src/idempotency/webhooks/webhooks.test.js',
          'src/idempotency/reconcile/reconcile.test.js',
        ]));
      expect(await written(), moduleType).toEqual(transpiled);
    }
  });
});
