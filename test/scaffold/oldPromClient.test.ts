import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { ROOT } from './generateInto.js';
import { SCAFFOLD_DIR } from './javascriptProject.js';
import { installIntoCache } from './npmCache.js';

const run = promisify(execFile);

/**
 * The store gauges (table size, age of the oldest in-flight claim) on the prom-client releases a project may have:
 * 13+ awaits a Gauge's `collect` at each scrape; 11 and 12 know no `collect` and scrape synchronously, so there
 * each scrape reads the store and reports what the previous read left. Each release is installed into a scratch
 * folder and the generated metrics.js (CommonJS JavaScript: the same template with the types stripped) is scraped
 * three times while the store's answer changes.
 */
const RELEASES = [
  { version: '11.5.3', collects: false },
  { version: '12.0.0', collects: false },
  { version: '15.1.3', collects: true },
];
const cacheFor = (version: string) => path.join(os.tmpdir(), `idempotency-builder-prom-client${version}`);

const installSkips = new Map<string, string | undefined>();
for (const { version } of RELEASES) {
  const skip = await installIntoCache(cacheFor(version), { 'prom-client': version, pg: '8.7.3' });
  if (skip) console.warn(`prom-client ${version} suite skipped: ${skip}`);
  installSkips.set(version, skip);
}

/**
 * Scrapes three times; the store holds 7 rows and a claim 12 s old, then 9 rows and none in flight. `observe`
 * wires the gauges to that store the way the database's scaffold reads it (PostgreSQL: its pgStoreSample.js).
 */
const script = (observe: string) => `'use strict';
const { Registry } = require('prom-client');
const { createIdempotencyMetrics, observeStore } = require('./${SCAFFOLD_DIR}/metrics.js');

const states = [{ size: 7, age: 12 }, { size: 9, age: null }];
let state = states[0];
const registry = new Registry();
${observe}
createIdempotencyMetrics(registry);

const values = async () => {
  const text = await registry.metrics();
  const value = (name) => Number(new RegExp('^' + name + ' (\\\\S+)$', 'm').exec(text)[1]);
  return [value('idempotency_store_rows'), value('idempotency_oldest_in_flight_age_seconds')];
};

(async () => {
  const scrapes = [await values()];
  await new Promise((resolve) => setImmediate(resolve));
  state = states[1];
  scrapes.push(await values());
  await new Promise((resolve) => setImmediate(resolve));
  scrapes.push(await values());
  const cleanupCounter = /^idempotency_cleanup_deleted_rows_total /m.test(await registry.metrics());
  process.stdout.write(JSON.stringify({ scrapes, cleanupCounter }));
})().catch((error) => {
  process.stderr.write(String((error && error.stack) || error));
  process.exitCode = 1;
});
`;

/** `cleanupCounter`: the store has a cleanup job for the counter to count (Redis expires its records by TTL). */
const STORES = [
  {
    database: 'postgres',
    // A pool answering the two queries pgStoreSample sends (row estimate; oldest PROCESSING age).
    observe: `const { pgStoreSample } = require('./${SCAFFOLD_DIR}/pgStoreSample.js');
observeStore(pgStoreSample({ query: async (sql) => ({ rows: [/reltuples/.test(sql) ? { n: String(state.size) } : { age: state.age === null ? null : String(state.age) }] }) }), registry);`,
    cleanupCounter: true,
  },
  {
    database: 'redis',
    observe: `observeStore(async () => ({ size: state.size, oldestInFlightSeconds: state.age === null ? 0 : state.age }), registry);`,
    cleanupCounter: false,
  },
];

describe.each(RELEASES)('store gauges on prom-client $version', ({ version, collects }) => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.skipIf(installSkips.get(version) !== undefined).each(STORES)('$database: each scrape reads the store; a cleanup counter only beside a cleanup job', { timeout: 120_000 }, async ({ database, observe, cleanupCounter }) => {
    const cache = cacheFor(version);
    await mkdir(path.join(cache, 'projects'), { recursive: true });
    const dir = await mkdtemp(path.join(cache, 'projects', `${database}-`));
    dirs.push(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, dependencies: { 'prom-client': version } }));
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete config['$schema'];
    Object.assign(config.stack as Record<string, unknown>, { framework: 'express', database, testFramework: 'vitest' });
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
    await generate({ cwd: dir, date: '2026-01-15' });
    await writeFile(path.join(dir, 'scrape.js'), script(observe));

    const { stdout } = await run(process.execPath, ['scrape.js'], { cwd: dir });
    // 13+: every scrape shows the store as it is. 11/12: a scrape shows what the previous one read (0 before any).
    expect(JSON.parse(stdout)).toEqual({
      scrapes: collects
        ? [[7, 12], [9, 0], [9, 0]]
        : [[0, 0], [7, 12], [9, 0]],
      cleanupCounter,
    });
  });
});
