import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { ROOT } from './generateInto.js';
import { SCAFFOLD_DIR } from './javascriptProject.js';
import { installIntoCache } from './npmCache.js';
import { REDIS_URL, redisSkipReason } from './storeContract/services.js';

const run = promisify(execFile);

/**
 * A CommonJS JavaScript project's Redis store on the ioredis releases it may have: 5.0.0 makes the Redis class
 * module.exports itself (and `default`) with no `Redis` property, 5.3 adds one. `const { Redis } = require('ioredis')`
 * is undefined on 5.0, so the store would throw "Redis is not a constructor" at start-up. Each release is installed
 * into a scratch folder (this repository's node_modules hold today's) and the generated pool and store run a claim
 * and a completion against a real Redis.
 */
const RELEASES = ['5.0.0', '5.3.2'];
const cacheFor = (version: string) => path.join(os.tmpdir(), `idempotency-builder-ioredis${version}`);

const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`ioredis CommonJS suite: the run against Redis is skipped: ${redisSkip}`);
const installSkips = new Map<string, string | undefined>();
for (const version of RELEASES) {
  const skip = await installIntoCache(cacheFor(version), { ioredis: version });
  if (skip) console.warn(`ioredis ${version} CommonJS suite skipped: ${skip}`);
  installSkips.set(version, skip);
}

const SCRIPT = `'use strict';
const { createPool } = require('./${SCAFFOLD_DIR}/pool.js');
const { RedisIdempotencyStore } = require('./${SCAFFOLD_DIR}/redisStore.js');

async function main() {
  const client = createPool(process.env.REDIS_URL, 2000);
  const store = new RedisIdempotencyStore({ client, prefix: process.env.PREFIX, timeoutMs: 2000 });
  try {
    const input = { scope: 'global', key: 'order-1', action: 'placeOrder', fingerprint: 'f1', algorithm: 'sha256', leaseMs: 5000, retentionMs: 60000 };
    const first = await store.claim(input);
    const second = await store.claim(input);
    const body = Buffer.from('{"id":1}');
    const completed = await store.complete(first.ref, 'COMPLETED', { status: 201, headers: {}, body }, 60000);
    const record = await store.read('global', 'order-1');
    process.stdout.write(JSON.stringify({ first: first.outcome, second: second.outcome, completed, status: record && record.status, body: record && record.response && record.response.body.toString() }));
  } finally {
    await client.quit();
  }
}
main().catch((error) => {
  process.stderr.write(String(error && error.stack || error));
  process.exitCode = 1;
});
`;

describe.each(RELEASES)('a CommonJS JavaScript project on ioredis %s', (version) => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.skipIf(installSkips.get(version) !== undefined)('loads the Redis class the way this release exports it, and the store claims and completes', { timeout: 120_000 }, async () => {
    const cache = cacheFor(version);
    await mkdir(path.join(cache, 'projects'), { recursive: true });
    const dir = await mkdtemp(path.join(cache, 'projects', 'orders-'));
    dirs.push(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, dependencies: { ioredis: version } }));
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete config['$schema'];
    Object.assign(config.stack as Record<string, unknown>, { framework: 'express', database: 'redis', testFramework: 'vitest' });
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
    await generate({ cwd: dir, date: '2026-01-15' });

    const pool = await readFile(path.join(dir, SCAFFOLD_DIR, 'pool.js'), 'utf8');
    expect(pool).toContain("const { default: Redis } = require('ioredis');");
    if (redisSkip) return;
    await writeFile(path.join(dir, 'claim.js'), SCRIPT);
    const prefix = `idempotency-builder-ioredis-${version}-${randomUUID()}`;
    const { stdout } = await run(process.execPath, ['claim.js'], { cwd: dir, env: { ...process.env, REDIS_URL, PREFIX: prefix } });
    expect(JSON.parse(stdout)).toEqual({ first: 'claimed', second: 'existing', completed: true, status: 'COMPLETED', body: '{"id":1}' });
  });
});
