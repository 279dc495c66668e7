import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold } from '../../src/scaffold/index.js';
import { generateAndCompile, modelFor } from './generateInto.js';

/**
 * Issue #15: the README's wiring opens the pool the way the project's store takes it. A Redis pool reads REDIS_URL
 * and a DynamoDB one DYNAMODB_ENDPOINT (createPool takes it unset, so no non-null assertion); the SQL stores read
 * DATABASE_URL. In every framework's wiring, the worker's, and in JavaScript without the assertion.
 */
const POOL: Record<string, { ts: string; js: string }> = {
  postgres: { ts: 'createPool(process.env.DATABASE_URL!, POLICY)', js: 'createPool(process.env.DATABASE_URL, POLICY)' },
  mysql: { ts: 'createPool(process.env.DATABASE_URL!, POLICY)', js: 'createPool(process.env.DATABASE_URL, POLICY)' },
  sqlite: { ts: 'createPool(process.env.DATABASE_URL!, POLICY)', js: 'createPool(process.env.DATABASE_URL, POLICY)' },
  redis: { ts: 'createPool(process.env.REDIS_URL!, POLICY)', js: 'createPool(process.env.REDIS_URL, POLICY)' },
  dynamodb: { ts: 'createPool(process.env.DYNAMODB_ENDPOINT, POLICY)', js: 'createPool(process.env.DYNAMODB_ENDPOINT, POLICY)' },
};
const FRAMEWORKS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs', 'none'] as const;

/** Every createPool(…) call in the README's code blocks. */
const poolCalls = (readme: string) => [...readme.matchAll(/```(?:ts|js)\n[\s\S]*?```/g)].flatMap((block) => [...block[0].matchAll(/createPool\([^()]*\)/g)].map((m) => m[0]));

/** The scaffold README of the fixture on that stack (a JavaScript project's: its JavaScript README). */
async function readmeOf(fixture: string, stack: Record<string, string>): Promise<string> {
  const model = await modelFor(fixture, (raw) => Object.assign(raw.stack as Record<string, unknown>, stack));
  return generateScaffold(model, { dir: 'src/idempotency' }).find((file) => file.path.endsWith('README.md'))!.contents;
}

describe.each(Object.keys(POOL))('the README wiring on %s', (database) => {
  it.each(FRAMEWORKS)('%s opens the store’s own pool', async (framework) => {
    const ts = await readmeOf('minimal-one-action', { framework, database });
    expect(poolCalls(ts)).toEqual([POOL[database]!.ts]);
  });

  it('a worker opens the store’s own pool', async () => {
    const ts = await readmeOf('worker-cron-no-payments', { database });
    expect(poolCalls(ts)).toEqual([POOL[database]!.ts]);
  });

  it('JavaScript: the same pool, without the non-null assertion', async () => {
    const js = await readmeOf('minimal-one-action', { framework: 'express', database, language: 'javascript' });
    expect(poolCalls(js)).toEqual([POOL[database]!.js]);
  });
});

describe('the README’s pool line compiles against the scaffold’s own createPool (tsc --strict)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.each(['redis', 'dynamodb'])('on %s', { timeout: 120_000 }, async (database) => {
    const model = await modelFor('minimal-one-action', (raw) => Object.assign(raw.stack as Record<string, unknown>, { framework: 'express', database }));
    const readme = generateScaffold(model, { dir: 'src/idempotency' }).find((file) => file.role === 'readme')!.contents;
    const [pool] = poolCalls(readme);
    const wiring = `import { createIdempotency, createPool, POLICY } from './idempotency/index.js';\n\nexport const idempotency = createIdempotency({ pool: ${pool!}, principal: () => 'global' });\n`;
    const generated = await generateAndCompile(model, `readme-pool-${database}`, {}, undefined, { 'src/wiring.ts': wiring });
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
  });
});
