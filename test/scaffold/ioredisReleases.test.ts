import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { ROOT } from './generateInto.js';
import { SCAFFOLD_DIR } from './javascriptProject.js';
import { installIntoCache } from './npmCache.js';
import { REDIS_URL, redisSkipReason } from './storeContract/services.js';

const run = promisify(execFile);

/**
 * The Redis store on the ioredis releases a project may have, in each module format: 5.0.0 makes the Redis class
 * module.exports itself (and `default`) with no `Redis` property, 5.3 adds one. `const { Redis } = require('ioredis')`
 * is undefined on 5.0 and `import { Redis } from 'ioredis'` is a SyntaxError under Node's ES module loader ("Named
 * export 'Redis' not found"), so the store would not even start. Each release is installed into a scratch folder
 * (this repository's node_modules hold today's); the generated pool and store run a claim and a completion against a
 * real Redis, and the TypeScript scaffold is first compiled against that release's own typings.
 */
const RELEASES = ['5.0.0', '5.3.2'];
const FORMATS = [
  { format: 'CommonJS JavaScript', language: 'javascript', type: 'commonjs' },
  { format: 'ES module JavaScript', language: 'javascript', type: 'module' },
  { format: 'TypeScript (NodeNext ES modules)', language: 'typescript', type: 'module' },
] as const;
const CASES = RELEASES.flatMap((version) => FORMATS.map((entry) => ({ version, ...entry })));
const cacheFor = (version: string) => path.join(os.tmpdir(), `idempotency-builder-ioredis${version}`);

const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`ioredis releases suite: the run against Redis is skipped: ${redisSkip}`);
const installSkips = new Map<string, string | undefined>();
for (const version of RELEASES) {
  const skip = await installIntoCache(cacheFor(version), { ioredis: version });
  if (skip) console.warn(`ioredis ${version} suites skipped: ${skip}`);
  installSkips.set(version, skip);
}

// An ES module either way: it loads the generated files (CommonJS or ES modules) through import().
const SCRIPT = `const [{ createPool }, { RedisIdempotencyStore }] = await Promise.all([import(process.argv[2] + '/pool.js'), import(process.argv[2] + '/redisStore.js')]);
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
  await client.del(...(await client.keys(process.env.PREFIX + '*')));
} finally {
  await client.quit();
}
`;

/** The TypeScript a NodeNext ES module project compiles: the store's files, against the release's own typings. */
const COMPILER_OPTIONS = {
  strict: true,
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  target: 'ES2022',
  outDir: 'out',
  skipLibCheck: true,
  types: ['node'],
  typeRoots: [path.join(ROOT, 'node_modules/@types')],
};

describe.each(CASES)('the Redis store in $format on ioredis $version', ({ version, language, type }) => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.skipIf(installSkips.get(version) !== undefined)('loads the Redis class the way this release exports it, and the store claims and completes', { timeout: 120_000 }, async () => {
    const cache = cacheFor(version);
    await mkdir(path.join(cache, 'projects'), { recursive: true });
    const dir = await mkdtemp(path.join(cache, 'projects', 'orders-'));
    dirs.push(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'orders-api', private: true, type, dependencies: { ioredis: version } }));
    const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-js-orders.json'), 'utf8')) as Record<string, unknown>;
    delete config['$schema'];
    Object.assign(config.stack as Record<string, unknown>, { language, framework: 'express', database: 'redis', testFramework: 'vitest' });
    await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
    await generate({ cwd: dir, date: '2026-01-15' });

    const extension = language === 'typescript' ? 'ts' : 'js';
    const pool = await readFile(path.join(dir, SCAFFOLD_DIR, `pool.${extension}`), 'utf8');
    // Never the named import, which only 5.3+ provides; the class is read as the default every release sets.
    expect(pool).not.toMatch(/import \{ Redis \} from 'ioredis'|const \{ Redis \} = require\('ioredis'\)/);
    expect(pool).toContain(type === 'commonjs' ? "const IORedis = require('ioredis');" : "import IORedis from 'ioredis';");
    expect(pool).toMatch(/^(export )?const Redis = IORedis\.default;$/m);

    let loaded = path.join(dir, SCAFFOLD_DIR);
    if (language === 'typescript') {
      const files = ['pool.ts', 'redisStore.ts'].map((file) => `${SCAFFOLD_DIR}/${file}`);
      await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files }));
      const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir }).then(
        () => '',
        (error: { stdout?: string }) => String(error.stdout ?? error),
      );
      expect(tsc).toBe('');
      loaded = path.join(dir, 'out');
    }
    if (redisSkip) return;
    await writeFile(path.join(dir, 'claim.mjs'), SCRIPT);
    const prefix = `idempotency-builder-ioredis-${version}-${randomUUID()}`;
    const { stdout } = await run(process.execPath, ['claim.mjs', pathToFileURL(loaded).href], { cwd: dir, env: { ...process.env, REDIS_URL, PREFIX: prefix } });
    expect(JSON.parse(stdout)).toEqual({ first: 'claimed', second: 'existing', completed: true, status: 'COMPLETED', body: '{"id":1}' });
  });
});
