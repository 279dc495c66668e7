import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, rawFixture } from '../helpers/fixtures.js';

function run(args: string[], cwd: string) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', CI: 'true' } });
}

describe('generate with a bad config', () => {
  it('exits 2 with one message naming the path, found value and allowed values, and no stack trace', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-bad-'));
    const raw = rawFixture('minimal-one-action');
    (raw['stack'] as Record<string, unknown>)['database'] = 'oracle';
    writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(raw));
    const result = run(['generate', '--cwd', dir], dir);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('stack.database: found "oracle"; allowed: "postgres"');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 with the fix when there is no config', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-none-'));
    const result = run(['generate', '--cwd', dir], dir);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('No config found');
    expect(result.stderr).toContain('idempotency-builder init');
  });

  it('refuses an output path outside the project', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-out-'));
    writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(rawFixture('minimal-one-action')));
    const result = run(['generate', '--cwd', dir, '--out', '../../etc/design.html'], dir);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('outside the project root');
  });
});
