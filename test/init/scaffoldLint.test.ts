import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';
import { runBuiltCli } from './runBuiltCli.js';
import { ROOT } from './wizardHarness.js';

// A project whose ESLint wants no semicolons and double quotes (neostandard-like): the scaffold init writes must
// pass its `npm run lint`, and `generate --check` must compare the same linted text it would write.
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const CONFIG = `module.exports = [
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2022 },
    rules: { semi: ['error', 'never'], quotes: ['error', 'double'], 'comma-dangle': ['error', 'never'] },
  },
];
`;

interface LintResult {
  filePath: string;
  errorCount: number;
  messages: Array<{ ruleId: string | null; message: string; line: number }>;
}
type ESLintClass = new (options: { cwd: string }) => { lintFiles(patterns: string[]): Promise<LintResult[]> };

/** The project's ESLint (this repository's, linked into its node_modules as an install would put it). */
async function projectLint(dir: string, folder: string): Promise<LintResult[]> {
  const resolved = createRequire(path.join(dir, 'package.json')).resolve('eslint');
  const { ESLint } = (await import(pathToFileURL(resolved).href)) as { ESLint: ESLintClass };
  return new ESLint({ cwd: dir }).lintFiles([folder]);
}

describe('init on a project with its own ESLint config', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('writes scaffold files its ESLint finds clean, says how many it adjusted, and generate --check agrees', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'ib-scaffold-lint-'));
    dirs.push(dir);
    await cp(path.join(ROOT, 'fixtures/projects/plain-js'), dir, { recursive: true });
    await writeFile(path.join(dir, 'eslint.config.js'), CONFIG);
    await mkdir(path.join(dir, 'node_modules'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules/eslint'), path.join(dir, 'node_modules/eslint'), 'dir');

    const init = await runBuiltCli(['init', '--cwd', dir, '--yes'], { CI: 'true' });
    expect(init.code, init.stderr).toBe(0);
    const said = /The project's ESLint \(--fix\) adjusted (\d+) of the (\d+) scaffold files it lints/.exec(init.stdout + init.stderr);
    expect(said, init.stdout + init.stderr).not.toBeNull();
    expect(Number(said![1])).toBeGreaterThan(0);

    const results = await projectLint(dir, 'idempotency');
    expect(results.length).toBe(Number(said![2]));
    const problems = results.flatMap((result) => result.messages.map((message) => `${path.relative(dir, result.filePath)}:${message.line} ${message.ruleId}: ${message.message}`));
    expect(problems).toEqual([]);
    // The rules did run on the files (a house-style file has semicolons and single quotes).
    const core = await readFile(path.join(dir, 'idempotency/core.js'), 'utf8');
    expect(core).toMatch(/^"use strict"\n/);
    // The document shows the files as written.
    // One file, or a linked folder once the design is long enough to split.
    const single = path.join(dir, 'docs/idempotency-design.html');
    const folder = path.join(dir, 'docs/idempotency-design');
    const pages = await readdir(folder).then((names) => names.filter((n) => n.endsWith('.html')).map((n) => path.join(folder, n)), () => [single]);
    const document = (await Promise.all(pages.map((page) => readFile(page, 'utf8')))).join('\n');
    expect(document).toContain('require(&quot;./core.js&quot;)');
    expect(document).not.toContain('require(&#39;./core.js&#39;)');

    const check = await runBuiltCli(['generate', '--cwd', dir, '--check'], { CI: 'true' });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    // Past the up-to-date shortcut (package.json is one of its inputs): the full render lints again and agrees.
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, description: 'a shop' }, null, 2));
    const full = await runBuiltCli(['generate', '--cwd', dir, '--check'], { CI: 'true' });
    expect(full.code, full.stdout + full.stderr).toBe(0);
    expect(full.stdout + full.stderr).toMatch(/The project's ESLint \(--fix\) adjusted/);
    // Its ESLint config is an input: another config makes the files out of date.
    await writeFile(path.join(dir, 'eslint.config.js'), CONFIG.replace("['error', 'never']", "['error', 'always']"));
    const changed = await runBuiltCli(['generate', '--cwd', dir, '--check'], { CI: 'true' });
    expect(changed.code).not.toBe(0);
    expect(changed.stdout + changed.stderr).toMatch(/idempotency\/core\.js \(differs\)/);
  });
});

describe('init in a workspace whose package keeps its own ESLint config and install', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('lints the scaffold written into packages/api with that package\'s config and eslint (nothing at the root)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'ib-scaffold-lint-workspace-'));
    dirs.push(dir);
    await mkdir(path.join(dir, '.git'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'shop', private: true, workspaces: ['packages/*'] }, null, 2));
    const api = path.join(dir, 'packages/api');
    await cp(path.join(ROOT, 'fixtures/projects/plain-js'), api, { recursive: true });
    await rm(path.join(api, 'yarn.lock'));
    await writeFile(path.join(api, 'eslint.config.js'), CONFIG);
    await mkdir(path.join(api, 'node_modules'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules/eslint'), path.join(api, 'node_modules/eslint'), 'dir');

    const init = await runBuiltCli(['init', '--cwd', dir, '--yes'], { CI: 'true' });
    expect(init.code, init.stderr).toBe(0);
    const said = /The project's ESLint \(--fix\) adjusted (\d+) of the (\d+) scaffold files it lints/.exec(init.stdout + init.stderr);
    expect(said, init.stdout + init.stderr).not.toBeNull();
    expect(Number(said![1])).toBeGreaterThan(0);
    const folder = (await readdir(api)).includes('idempotency') ? 'idempotency' : 'src/idempotency';
    const results = await projectLint(api, folder);
    expect(results.length).toBe(Number(said![2]));
    const problems = results.flatMap((result) => result.messages.map((message) => `${path.relative(dir, result.filePath)}:${message.line} ${message.ruleId}: ${message.message}`));
    expect(problems).toEqual([]);
  });
});

