import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, CONFIG_DIR, ROOT } from '../helpers/fixtures.js';

// Issue #20: a JavaScript project's generate prints every file directly or takes it from the build's precompiled
// table, so a cold run (a new process, a new project, no cache) loads neither the TypeScript compiler nor prettier,
// the two heaviest modules. A loader hook in the child records every module it resolves, ES and CommonJS alike.

const PRECOMPILED = path.join(ROOT, 'dist/scaffold/javascript/precompiled.json');
const built = existsSync(PRECOMPILED);
if (!built) console.warn('cold JavaScript generate test skipped: run `npm run build` first (it runs the built CLI)');

const work = mkdtempSync(path.join(os.tmpdir(), 'ib-cold-js-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ES imports go through the resolve hook (its own thread, so it appends to the file itself); require() calls, as
// TypeScript is loaded (createRequire), through Module._load on the main thread.
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.IB_LOADED, resolved.url + '\\n');
  return resolved;
}
`;
const PRELOAD = `import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';
register('./hooks.mjs', import.meta.url);
const load = Module._load;
Module._load = function (request, parent, isMain) {
  appendFileSync(process.env.IB_LOADED, 'require:' + Module._resolveFilename(request, parent, isMain) + '\\n');
  return load.apply(this, arguments);
};
`;
writeFileSync(path.join(work, 'hooks.mjs'), HOOKS);
writeFileSync(path.join(work, 'preload.mjs'), PRELOAD);

/** A project holding only its config (and package.json), generated in a child process; the modules it loaded. */
function coldGenerate(
  name: string,
  stack: Record<string, string | undefined>,
  packageType?: 'module',
  packageJson: Record<string, unknown> = {},
  patch: (config: Record<string, unknown>) => void = () => {},
): { loaded: string[]; files: string[] } {
  const dir = path.join(work, name);
  const config = JSON.parse(readFileSync(path.join(CONFIG_DIR, 'express-js-orders.json'), 'utf8')) as Record<string, unknown>;
  delete config.$schema;
  Object.assign(config.stack as object, stack);
  patch(config);
  rmSync(dir, { recursive: true, force: true });
  spawnSync('mkdir', ['-p', dir]);
  writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, ...(packageType ? { type: packageType } : {}), ...packageJson }));
  const loadedFile = path.join(work, `${name}.loaded`);
  writeFileSync(loadedFile, '');
  const run = spawnSync(process.execPath, ['--import', path.join(work, 'preload.mjs'), BIN, 'generate', '--cwd', dir, '--date', '2026-12-02', '--quiet'], {
    env: { ...process.env, NO_COLOR: '1', CI: '1', XDG_CACHE_HOME: path.join(work, `${name}-cache`), IB_LOADED: loadedFile },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  const files = spawnSync('find', [dir, '-name', '*.test.js'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return { loaded: readFileSync(loadedFile, 'utf8').split('\n').filter(Boolean), files };
}

const compiler = (loaded: readonly string[]) => loaded.filter((url) => /node_modules\/typescript\/|@ts-morph\/common\/dist\/typescript|node_modules\/ts-morph\//.test(url));
const heavy = (loaded: readonly string[]) => loaded.filter((url) => /node_modules\/(typescript|prettier)\/|@ts-morph\/common\/dist\/typescript|node_modules\/ts-morph\//.test(url));

describe.skipIf(!built)('a cold JavaScript generate', () => {
  it.each([
    { name: 'commonjs-vitest', stack: { testFramework: 'vitest' } },
    { name: 'commonjs-jest', stack: { testFramework: 'jest' } },
    { name: 'esm-mocha', stack: { testFramework: 'mocha' }, packageType: 'module' as const },
    { name: 'esm-node-test', stack: { testFramework: 'node-test' }, packageType: 'module' as const },
    // NestJS's adapter is TypeScript only: a JavaScript NestJS project gets the reference target, on either platform.
    { name: 'commonjs-nestjs', stack: { framework: 'nestjs', testFramework: 'jest' }, packageJson: { dependencies: { '@nestjs/core': '^10.0.0' } } },
    { name: 'esm-nestjs-fastify', stack: { framework: 'nestjs' }, packageType: 'module' as const, packageJson: { dependencies: { '@nestjs/core': '^10.0.0', '@nestjs/platform-fastify': '^10.0.0' } } },
    // Jest 26: bare builtin specifiers and Node's globals bound for its sandbox (profile/javascriptProfile.ts); 27: the globals.
    { name: 'commonjs-jest26', stack: { testFramework: 'jest' }, packageJson: { devDependencies: { jest: '^26.6.3' } } },
    { name: 'esm-jest27', stack: { testFramework: 'jest' }, packageType: 'module' as const, packageJson: { devDependencies: { jest: '^27.5.1' } } },
  ])('loads neither TypeScript nor prettier ($name)', { timeout: 120_000 }, ({ name, stack, packageType, packageJson }) => {
    const { loaded, files } = coldGenerate(name, stack, packageType, packageJson);
    // The hooks saw the run: the CLI's own modules and the suites it wrote.
    expect(loaded.some((url) => url.includes('/dist/cli/'))).toBe(true);
    expect(files.some((file) => file.endsWith('idempotency.test.js'))).toBe(true);
    expect(heavy(loaded)).toEqual([]);
    // An old Jest's edits were made: node: specifiers bare, the sandbox's missing globals bound.
    if (packageJson?.devDependencies) {
      const suite = readFileSync(files.find((file) => file.endsWith('/idempotency.test.js'))!, 'utf8');
      expect(suite).toMatch(/runInThisContext\('fetch'\)/);
      expect(/require\('node:|from 'node:/.test(suite)).toBe(name.includes('jest27'));
    }
  });

  // A value too wide for its line (a long route and many significant fields): settings.js and the suites are
  // printed all the same and prettier lays them out, loaded for them; the compiler is not.
  it('loads prettier but not TypeScript when a value overflows a line', { timeout: 120_000 }, () => {
    const { loaded, files } = coldGenerate('commonjs-overflow', { testFramework: 'vitest' }, undefined, {}, (config) => {
      const [action] = config.actions as Array<Record<string, unknown>>;
      Object.assign(action!, { significantFields: Array.from({ length: 8 }, (_, i) => `lineItem${i}.amountInCents`), route: `POST /${'segment/'.repeat(12)}orders` });
    });
    expect(files.some((file) => file.endsWith('idempotency.test.js'))).toBe(true);
    expect(loaded.some((url) => /node_modules\/prettier\//.test(url))).toBe(true);
    expect(compiler(loaded)).toEqual([]);
  });
});
