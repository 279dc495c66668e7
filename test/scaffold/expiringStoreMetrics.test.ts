import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

/**
 * Issue #15: Redis and DynamoDB expire their records by TTL and ship no cleanup job, so nothing would ever feed a
 * cleanup counter. Their METRIC_NAMES (settings.ts), alert rules, README and document carry none, and metrics.ts (one
 * file for every store) registers the counter only under a name settings.ts gives (oldPromClient.test.ts scrapes it);
 * the SQL stores, whose cleanup job counts what it deletes, keep it.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const CLEANUP_COUNTER = /cleanupDeleted|idempotency_cleanup_deleted_rows|cleanup_deleted_rows/;

function onStore(fixture: string, database: string): Record<string, unknown> {
  const raw = structuredClone(rawFixture(fixture));
  (raw.stack as Record<string, unknown>).database = database;
  raw.scaffold = { dir: 'src/idempotency' };
  return raw;
}

describe.each(['express-stripe-payments', 'worker-cron-no-payments'])('%s', (fixture) => {
  it.each(['redis', 'dynamodb'])('on %s: no cleanup counter in settings.ts, the alert rules, the README or the document', { timeout: 120_000 }, async (database) => {
    const result = await renderConfig(onStore(fixture, database), { format: 'md' });
    dirs.push(result.dir);
    const file = (name: string) => result.plan.find((item) => item.path === `src/idempotency/${name}`);
    expect(file('cleanup-job.ts')).toBeUndefined();
    for (const name of ['settings.ts', 'idempotency-alerts.yml', 'README.md']) {
      expect(file(name), name).toBeDefined();
      const line = file(name)!.contents.split('\n').find((candidate) => CLEANUP_COUNTER.test(candidate));
      expect(line, `${database} ${name}`).toBeUndefined();
    }
    expect(result.text.split('\n').find((line) => CLEANUP_COUNTER.test(line)), `${database} document`).toBeUndefined();
  });

  it.each(['postgres', 'mysql', 'sqlite'])('on %s: the cleanup job feeds its counter, which metrics.ts and settings.ts define', { timeout: 120_000 }, async (database) => {
    const result = await renderConfig(onStore(fixture, database), { format: 'md' });
    dirs.push(result.dir);
    const file = (name: string) => result.plan.find((item) => item.path === `src/idempotency/${name}`)!.contents;
    expect(file('cleanup-job.ts')).toContain('METRIC_NAMES.cleanupDeleted');
    expect(file('README.md')).toContain('metrics.cleanupDeleted(deleted)');
    expect(file('settings.ts')).toContain("cleanupDeleted: 'idempotency_cleanup_deleted_rows_total'");
  });
});
