import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { rawFixture } from '../helpers/fixtures.js';

function project(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ib-regen-'));
  const raw = rawFixture('large-marketplace');
  delete raw['$schema'];
  writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(raw, null, 2));
  return dir;
}

describe('regenerating a split folder', () => {
  let epoch: string | undefined;
  beforeEach(() => {
    epoch = process.env['SOURCE_DATE_EPOCH'];
    delete process.env['SOURCE_DATE_EPOCH'];
  });
  afterEach(() => {
    if (epoch !== undefined) process.env['SOURCE_DATE_EPOCH'] = epoch;
  });

  it('keeps the generation date on every page while nothing else changed, so a rerun on a later day writes nothing', async () => {
    const dir = project();
    await generate({ cwd: dir, now: () => new Date('2026-12-01T10:00:00Z') });
    const second = await generate({ cwd: dir, now: () => new Date('2026-12-05T10:00:00Z') });
    expect(second.plan.filter((p) => p.action !== 'unchanged').map((p) => p.path)).toEqual([]);
    const folder = path.join(dir, 'docs/idempotency-design');
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.html'))) {
      expect(readFileSync(path.join(folder, file), 'utf8')).toContain('<time datetime="2026-12-01">');
    }
  });

  it('renders byte-identical folders from the same inputs', async () => {
    const [a, b] = [project(), project()];
    const first = await generate({ cwd: a, date: '2026-12-02', dryRun: true });
    const second = await generate({ cwd: b, date: '2026-12-02', dryRun: true });
    const docs = (plan: typeof first.plan) => plan.filter((p) => p.path.startsWith('docs/')).map((p) => [p.path, p.contents]);
    expect(docs(second.plan)).toEqual(docs(first.plan));
  });
});
