import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { installIntoCache } from '../scaffold/npmCache.js';

const run = promisify(execFile);
const TEMPLATES = path.resolve(import.meta.dirname, '../../templates/scaffold/typescript/client');

/**
 * The client hook lands in the frontend's own folder and is compiled by the frontend's compiler, which may be old:
 * cgarrovillo/ecommerce@30efd95's Next.js frontend pins TypeScript ^3.7 (3.9 at most) with React 17 typings.
 */
const PACKAGES = { typescript: '3.9.10', '@types/react': '17.0.80' };
const OVERRIDES = { csstype: '3.0.11', '@types/prop-types': '15.7.5', '@types/scheduler': '0.16.2' };
const CACHE = path.join(os.tmpdir(), 'idempotency-builder-typescript3.9-react17');
const skip = await installIntoCache(CACHE, PACKAGES, OVERRIDES);
if (skip) console.warn(`the client hook under TypeScript 3.9 is skipped: ${skip}`);

describe('the client hook templates under TypeScript 3.9 and React 17 typings', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip !== undefined)('type-check strictly, on an ES5 target with the DOM typings of that release', { timeout: 120_000 }, async () => {
    await mkdir(path.join(CACHE, 'projects'), { recursive: true });
    dir = await mkdtemp(path.join(CACHE, 'projects', 'hook-'));
    // As a bundler-resolved frontend imports them: extensionless.
    for (const name of ['intentKey.ts', 'useIdempotencyKey.ts']) {
      await writeFile(path.join(dir, name), (await readFile(path.join(TEMPLATES, name), 'utf8')).replace(/from '(\.\/\w+)\.js'/g, "from '$1'"));
    }
    const tsconfig = { compilerOptions: { target: 'es5', lib: ['dom', 'dom.iterable', 'esnext'], strict: true, module: 'esnext', moduleResolution: 'node', noEmit: true, isolatedModules: true, typeRoots: [path.join(CACHE, 'node_modules/@types')] }, include: ['*.ts'] };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const output = await run(process.execPath, [path.join(CACHE, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir }).then(
      (result) => `${result.stdout}${result.stderr}`,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(output).toBe('');
  });
});
