import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lintWithProjectESLint } from '../../src/emit/lintFiles.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** No semicolons, double quotes: what the house style (prettier) does not write, so a fix shows the config ran. */
const FLAT = `module.exports = [{ files: ['**/*.js'], languageOptions: { sourceType: 'commonjs', ecmaVersion: 2022 }, rules: { semi: ['error', 'never'], quotes: ['error', 'double'] } }];\n`;
const LEGACY = { root: true, parserOptions: { ecmaVersion: 2022 }, rules: { semi: ['error', 'never'], quotes: ['error', 'double'] } };
const SOURCE = "const status = 'ok';\nmodule.exports = { status };\n";
const FIXED = 'const status = "ok"\nmodule.exports = { status }\n';

/**
 * A workspace in a temp folder (a git repository: `.git` marks its root), with this repository's ESLint linked into
 * the node_modules the files name, as an install would put it.
 */
async function workspace(files: Record<string, string>, eslintIn: readonly string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-lint-workspace-'));
  dirs.push(dir);
  await mkdir(path.join(dir, '.git'));
  const all = { 'package.json': JSON.stringify({ name: 'repo', private: true, workspaces: ['packages/*'] }), ...files };
  for (const [rel, text] of Object.entries(all)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  for (const place of eslintIn) {
    await mkdir(path.join(dir, place, 'node_modules'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules/eslint'), path.join(dir, place, 'node_modules/eslint'), 'dir');
  }
  return dir;
}

const pkg = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ name, version: '1.0.0', ...extra });

describe('the project\'s ESLint for scaffold files in a workspace package', () => {
  it('a flat config and eslint both only in packages/api: found as ESLint run in that package would', async () => {
    const dir = await workspace({ 'packages/api/package.json': pkg('api'), 'packages/api/eslint.config.js': FLAT }, ['packages/api']);
    const { fixed, linted } = await lintWithProjectESLint(dir, [
      { path: 'packages/api/src/idempotency/status.js', text: SOURCE },
      // Another package has no config on its way up to the repository root: left as it was.
      { path: 'packages/web/src/idempotency/status.js', text: SOURCE },
    ]);
    expect(fixed).toEqual([FIXED, undefined]);
    expect(linted).toBe(1);
  });

  it('a flat config at the root, eslint installed only in the package', async () => {
    const dir = await workspace({ 'eslint.config.js': FLAT, 'packages/api/package.json': pkg('api') }, ['packages/api']);
    const { fixed } = await lintWithProjectESLint(dir, [{ path: 'packages/api/src/idempotency/status.js', text: SOURCE }]);
    expect(fixed).toEqual([FIXED]);
  });

  it('an .eslintrc.json in the package, eslint at the root: linted with the eslintrc config', async () => {
    const dir = await workspace({ 'packages/api/package.json': pkg('api'), 'packages/api/.eslintrc.json': JSON.stringify(LEGACY) }, ['.']);
    const { fixed } = await lintWithProjectESLint(dir, [{ path: 'packages/api/src/idempotency/status.js', text: SOURCE }]);
    expect(fixed).toEqual([FIXED]);
  });

  it('eslintConfig in the package\'s package.json', async () => {
    const dir = await workspace({ 'packages/api/package.json': pkg('api', { eslintConfig: LEGACY }) }, ['.']);
    const { fixed } = await lintWithProjectESLint(dir, [{ path: 'packages/api/src/idempotency/status.js', text: SOURCE }]);
    expect(fixed).toEqual([FIXED]);
  });

  it('the package\'s own flat config wins over the root\'s; each config linted with its own rules', async () => {
    const doubleSemi = FLAT.replace("semi: ['error', 'never']", "semi: ['error', 'always']");
    const dir = await workspace(
      { 'eslint.config.js': doubleSemi, 'packages/api/package.json': pkg('api'), 'packages/api/eslint.config.js': FLAT, 'packages/jobs/package.json': pkg('jobs') },
      ['.'],
    );
    const { fixed } = await lintWithProjectESLint(dir, [
      { path: 'packages/api/src/idempotency/status.js', text: SOURCE },
      { path: 'packages/jobs/src/idempotency/status.js', text: SOURCE },
    ]);
    expect(fixed).toEqual([FIXED, 'const status = "ok";\nmodule.exports = { status };\n']);
  });
});
