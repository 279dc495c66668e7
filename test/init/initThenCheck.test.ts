import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from './runBuiltCli.js';
import { listFiles, ROOT } from './wizardHarness.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

// init writes exactly what generate would: on a project nobody touched since, `generate --check` is green and a
// plain `generate` changes nothing. It used to fail wherever init's inspection credited existing protection.
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function copy(fixture: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-init-check-'));
  dirs.push(dir);
  await cp(path.join(ROOT, fixture), dir, { recursive: true });
  return dir;
}

describe('init, then generate --check on the untouched project', { timeout: CLI_TEST_TIMEOUT }, () => {
  it.each(['fixtures/projects/express-shop', 'fixtures/init/express-stripe', 'fixtures/projects/plain-js'])('%s', async (fixture) => {
    const dir = await copy(fixture);
    const init = await runBuiltCli(['init', '--cwd', dir, '--yes'], { CI: 'true' });
    expect(init.code, init.stderr).toBe(0);
    const files = await listFiles(dir);
    const before = await Promise.all(files.map((file) => readFile(path.join(dir, file), 'utf8')));

    const check = await runBuiltCli(['generate', '--cwd', dir, '--check'], { CI: 'true' });
    expect(check.code, check.stderr).toBe(0);
    const again = await runBuiltCli(['generate', '--cwd', dir, '--json'], { CI: 'true' });
    expect(again.code, again.stderr).toBe(0);
    const changed = (JSON.parse(again.stdout) as { files: Array<{ path: string; action: string }> }).files.filter((file) => file.action !== 'unchanged');
    expect(changed).toEqual([]);
    expect(await listFiles(dir)).toEqual(files);
    expect(await Promise.all(files.map((file) => readFile(path.join(dir, file), 'utf8')))).toEqual(before);
  });
});
