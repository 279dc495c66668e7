import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, runCli } from '../e2e/cli.js';

// The built CLI as a user runs it (npm test builds first).
describe('idempotency-builder verify', () => {
  let folder = '';

  beforeAll(async () => {
    const dir = await copyFixture('minimal-one-action');
    const generated = await runCli(['generate', '--cwd', dir, '--split', 'always', '--date', '2026-12-02', '--quiet']);
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);
    folder = path.join(dir, 'docs/idempotency-design');
  });

  it('exits 0 on the folder generate wrote', async () => {
    const run = await runCli(['verify', folder]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('passed verification');
  });

  it('exits 1 and lists every failure with its file', async () => {
    const index = path.join(folder, 'index.html');
    const original = readFileSync(index, 'utf8');
    try {
      writeFileSync(index, original.replace('href="01-', 'href="missing-01-').replace('</body>', '<script>1</script></body>'));
      const run = await runCli(['verify', folder]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/failed verification with \d+ problems/);
      expect(run.stderr).toContain(`- ${folder}/index.html: <a> "missing-01-`);
      expect(run.stderr).toContain(`- ${folder}/index.html: contains a <script> element`);
    } finally {
      writeFileSync(index, original);
    }
  });

  it('exits 2 naming the path when there is nothing to verify', async () => {
    const run = await runCli(['verify', path.join(folder, 'nope.html')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no such file or folder');
  });
});
