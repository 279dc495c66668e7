import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const WORKER = 'src/worker.ts';

/**
 * A bare kafkajs worker (no HTTP framework, "framework": "none"): apply wraps its eachMessage with the scaffold's
 * kafkaEachMessage and writes the plain instance it imports, as it does in an app with a web framework.
 */
describe('apply on a kafkajs worker without a web framework', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;

  beforeAll(async () => {
    copy = await copyFixture('kafka-worker');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('wraps eachMessage, writes the plain instance, type-checks, and a second apply changes nothing', async () => {
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.changes.map((c) => c.path).sort()).toEqual(['src/idempotency/instance.ts', WORKER]);
    expect(first.manual.map((m) => m.reason).join('\n')).not.toContain('no app instance');
    const worker = await readFile(path.join(copy.dir, WORKER), 'utf8');
    expect(worker).toContain("import { idempotency } from './idempotency/instance.js';");
    expect(worker).toContain("import { kafkaEachMessage } from './idempotency/consumers/kafka.js';");
    expect(worker).toContain(`  await consumer.run({
    autoCommit: false,
    eachMessage: kafkaEachMessage(consumer, {
      core: idempotency.core,
      action: ACTIONS.sendReceipt,
      handle: async ({ message }) => {`);
    // No request principal in a worker: the instance is the plain one, its store the generated pool.
    const instance = await readFile(path.join(copy.dir, 'src/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain('export const idempotency = createIdempotency({');
    expect(first.edits.map((e) => e.file).sort()).toEqual(['src/idempotency/instance.ts', WORKER]);

    expect(await compile(copy.dir)).toBe('');
    const before = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.manual).toEqual(first.manual);
    expect(await snapshotTree(copy.dir)).toEqual(before);
  });
});
