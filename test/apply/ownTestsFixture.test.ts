import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, runOwnTests, type FixtureCopy } from './fixtureApp.js';

const TEST = 'test/orders.test.ts';

/**
 * Issue #19's "its own tests still pass" on an app whose tests place orders through the wired route (no database:
 * the orders live in memory). Once the route is wired, a request without a key is answered 400 and, with no store
 * server under the tests, a keyed one 503: apply gives each of the test's requests a fresh key, and the instance
 * puts the app's own tests (NODE_ENV=test) on the scaffold's memory store.
 */
describe('apply keeps the app\'s own route tests green', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  beforeAll(async () => {
    copy = await copyFixture('express-own-tests');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('passes before apply, and after it with a key per request and the memory store; a second apply changes nothing', async () => {
    expect(await compile(copy.dir)).toBe('');
    const before = await runOwnTests(copy.dir);
    expect(before.ok, before.output).toBe(true);
    const original = await readFile(path.join(copy.dir, TEST), 'utf8');

    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', 'src/routes/orders.ts', TEST]);
    const test = await readFile(path.join(copy.dir, TEST), 'utf8');
    expect(test).toContain("import { randomUUID } from 'node:crypto';");
    expect(test.match(/'Idempotency-Key': randomUUID\(\)/g)).toHaveLength(3);
    // The GET is not a protected route: left as it was.
    expect(test).toContain('fetch(`${base}/orders`, { headers: auth })');
    const instance = await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('store: inTests ? createMemoryStore() : undefined,');
    expect(await compile(copy.dir)).toBe('');
    const after = await runOwnTests(copy.dir);
    expect(after.ok, after.output).toBe(true);

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);

    // Without the keys the wired route refuses the test's requests: the edit is what keeps the suite green.
    await writeFile(path.join(copy.dir, TEST), original);
    expect(await compile(copy.dir)).toBe('');
    const unkeyed = await runOwnTests(copy.dir);
    expect(unkeyed.ok).toBe(false);
    expect(unkeyed.output).toMatch(/400/);
  });
});
